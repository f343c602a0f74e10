package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Row returns the projected row with its row_num, and the sequence of the key's last
// mutation (the value to expect when writing it next). A missing key returns
// ErrNotFound and, if the key was deleted, the delete's sequence.
func (p *Projector) Row(key string) (contract.Row, uint64, error) {
	var row contract.Row
	var seq uint64
	var err error
	if verr := p.view(func(tx *bolt.Tx) error {
		row, seq, err = p.row(tx, key)
		if isDamage(err) {
			return err
		}
		return nil
	}); verr != nil {
		return contract.Row{}, 0, fmt.Errorf("projector: row %s: %w", key, verr)
	}
	return row, seq, err
}

// row reads key in tx, as Row answers.
func (p *Projector) row(tx *bolt.Tx, key string) (contract.Row, uint64, error) {
	var row contract.Row
	sv, err := get(tx, bucketDirSeq, []byte(key))
	if err != nil {
		return row, 0, err
	}
	seq := readU64(sv)
	v, err := get(tx, bucketRows, []byte(key))
	if err != nil {
		return row, 0, err
	}
	if v == nil {
		return contract.Row{}, seq, ErrNotFound
	}
	if err := json.Unmarshal(v, &row); err != nil {
		return contract.Row{}, 0, fmt.Errorf("projector: row %s: %w", key, err)
	}
	row.RowNum = p.index.rank(key)
	return row, seq, nil
}

// GateView is what the dispatcher's gate reads for one request: whether the
// invocation already has its receipt, and the row (as Row answers, RowErr matching
// ErrNotFound when there is none) with its contract fingerprint.
type GateView struct {
	HasReceipt bool
	// Row is the key's row, nil when RowErr is set (or HasReceipt): the cache's,
	// shared by every call to the row's version, which none may change. Its
	// RowNum is 0 (a call does not need its place in the directory).
	Row *contract.Row
	// Fingerprint is contract.Fingerprint(Row); Seq is the control-stream
	// sequence of the mutation that wrote Row.
	Fingerprint string
	Seq         uint64
	RowErr      error
	// Signature is the row's compiled input_schema and argument mapping, nil when
	// it has none; SignatureErr is why it does not compile. Both are compiled once
	// per row version and shared by every call.
	Signature    *contract.Signature
	SignatureErr error
}

// Gate reads the row for a request to key. When invocationID is not empty it first
// checks whether that invocation already has its receipt (a redelivered request),
// and then reads nothing else. Rows come from a cache of decoded rows kept in step
// with every directory commit: repeated calls to a key do not touch bbolt.
func (p *Projector) Gate(key, invocationID string) GateView {
	var g GateView
	if invocationID != "" {
		if err := p.db.View(func(tx *bolt.Tx) error {
			g.HasReceipt = tx.Bucket(bucketReceipts).Get([]byte(invocationID)) != nil
			return nil
		}); err != nil {
			return GateView{RowErr: fmt.Errorf("projector: receipt %s: %w", invocationID, err)}
		}
		if g.HasReceipt {
			return g
		}
	}
	gr, err := p.gateRow(key)
	if err != nil {
		g.RowErr = err
		return g
	}
	g.Row, g.Fingerprint, g.Seq = &gr.Row, gr.Fingerprint, gr.Seq
	g.Signature, g.SignatureErr = gr.Signature, gr.SignatureErr
	return g
}

// gateRow is key's row from the cache, read and decoded on a miss. Missing keys are
// not cached: a row written elsewhere must be found as soon as it is folded.
func (p *Projector) gateRow(key string) (*cachedRow, error) {
	gr, gen := p.rows.get(key)
	if gr != nil {
		return gr, nil
	}
	row, seq, err := p.Row(key)
	if err != nil {
		return nil, err
	}
	row.RowNum = 0
	gr = newCachedRow(row)
	gr.Seq = seq
	p.rows.put(key, gr, gen)
	return gr, nil
}

// Filter selects rows for List. Empty fields match everything.
type Filter struct {
	Category string
	Type     string
	Enabled  *int
}

func (f Filter) match(r *contract.Row) bool {
	return (f.Category == "" || r.Category == f.Category) &&
		(f.Type == "" || r.Type == f.Type) &&
		(f.Enabled == nil || r.Enabled == *f.Enabled)
}

// List returns matching rows in canonical order, skipping offset matches and
// returning at most limit, plus the total number of matches.
func (p *Projector) List(f Filter, offset, limit int) ([]contract.Row, int, error) {
	return page(p.Each, f, offset, limit)
}

// page is List over each, the live projection's Each or a Snapshot's.
func page(each func(Filter, func(*contract.Row) error) error, f Filter, offset, limit int) ([]contract.Row, int, error) {
	out := []contract.Row{}
	total := 0
	err := each(f, func(r *contract.Row) error {
		total++
		if total > offset && len(out) < limit {
			out = append(out, *r)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// Count is the number of rows in the directory.
func (p *Projector) Count() int { return p.index.len() }

// Receipt returns the receipt of an invocation. When the invocation was requested
// but has no receipt yet, it returns ErrNotFound with pending true.
func (p *Projector) Receipt(invocationID string) (rc wire.Receipt, pending bool, err error) {
	found := false
	err = p.view(func(tx *bolt.Tx) error {
		v, err := getReceipt(tx, []byte(invocationID))
		if err != nil {
			return err
		}
		if v == nil {
			pending = tx.Bucket(bucketInvocations).Get([]byte(invocationID)) != nil
			return nil
		}
		found = true
		return json.Unmarshal(v, &rc)
	})
	if err != nil {
		return rc, false, fmt.Errorf("projector: receipt %s: %w", invocationID, err)
	}
	if !found {
		return rc, pending, ErrNotFound
	}
	return rc, false, nil
}

// ReceiptsByKey returns up to limit receipts of key, newest first.
func (p *Projector) ReceiptsByKey(key string, limit int) ([]wire.Receipt, error) {
	var out []wire.Receipt
	prefix := append([]byte(key), 0)
	err := p.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketByKey).Cursor()
		// Seek past the prefix, then walk backwards.
		k, _ := c.Seek(append(append([]byte{}, prefix...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Prev() {
			lv, err := get(tx, bucketByKey, k)
			if err != nil {
				return err
			}
			leaf, ok := readLeafValue(lv)
			if !ok {
				return &valueError{bucket: string(bucketByKey), key: string(k)}
			}
			l, err := leafAt(tx, leaf)
			if err != nil {
				return err
			}
			v := l.Data
			var rc wire.Receipt
			if err := json.Unmarshal(v, &rc); err != nil {
				return err
			}
			out = append(out, rc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projector: receipts of %s: %w", key, err)
	}
	return out, nil
}

// RecentReceipts returns up to limit receipts (no bound when limit is 0) that keep
// admits (every one when keep is nil), the newest first in the log's order (the
// ledger's: the order the receipts were stored in, whatever their invocation
// ids, which a caller may choose or an Idempotency-Key derives). It reads at
// most scan receipts, so a filter that admits few costs no more than that.
func (p *Projector) RecentReceipts(limit, scan int, keep func(*wire.Receipt) bool) ([]wire.Receipt, error) {
	var out []wire.Receipt
	err := p.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLedgerLeaves).Cursor()
		for k, sv := c.Last(); k != nil && (limit == 0 || len(out) < limit) && scan > 0; k, sv = c.Prev() {
			scan--
			v, err := unsum(bucketLedgerLeaves, k, sv)
			if err != nil {
				return err
			}
			if len(k) != 8 {
				return fmt.Errorf("%w: a leaf's key is %d bytes, not an index", ErrLedger, len(k))
			}
			l, err := leafFrom(tx, int64(binary.BigEndian.Uint64(k)), v)
			if err != nil {
				return err
			}
			if l.Data == nil {
				return fmt.Errorf("%w: the receipt of leaf %d is missing", ErrLedger, l.Index)
			}
			var rc wire.Receipt
			if err := json.Unmarshal(l.Data, &rc); err != nil {
				return err
			}
			if keep == nil || keep(&rc) {
				out = append(out, rc)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projector: recent receipts: %w", err)
	}
	return out, nil
}

// Breaker returns the breaker state of key (the zero state when it never struck).
func (p *Projector) Breaker(key string) (breaker.State, error) {
	var st breaker.State
	err := p.view(func(tx *bolt.Tx) error {
		var err error
		st, _, err = loadBreaker(tx, key)
		return err
	})
	return st, err
}

// HasBreaker reports whether key has a breaker state: a call to it struck once, or
// it was reset.
func (p *Projector) HasBreaker(key string) (bool, error) {
	var ok bool
	err := p.view(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketBreakers).Get([]byte(key)) != nil
		return nil
	})
	return ok, err
}

// Breakers returns every breaker state that is open, or refuses a caller
// (breaker.State.Tripped for one of its callers).
func (p *Projector) Breakers() ([]breaker.State, error) {
	return p.breakers(func(st *breaker.State) bool {
		return st.Open || slices.ContainsFunc(st.Callers, func(r breaker.CallerRun) bool { return !r.OpenedAt.IsZero() })
	})
}

// Striking returns every breaker state that is not open but has strikes: a row
// whose credential is failing and which is not refused yet.
func (p *Projector) Striking() ([]breaker.State, error) {
	return p.breakers(func(st *breaker.State) bool { return !st.Open && st.Strikes > 0 })
}

// breakers returns every breaker state keep admits.
func (p *Projector) breakers(keep func(*breaker.State) bool) ([]breaker.State, error) {
	var out []breaker.State
	err := p.view(func(tx *bolt.Tx) error {
		return each(tx, bucketBreakers, func(k, v []byte) error {
			var st breaker.State
			if err := json.Unmarshal(v, &st); err != nil {
				return err
			}
			if keep(&st) {
				out = append(out, st)
			}
			return nil
		})
	})
	return out, err
}
