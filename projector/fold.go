package projector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// effects are in-memory consequences of a batch, published only after it commits.
type effects struct {
	dir     []dirChange
	skips   []skipped
	revoked []wire.TokenRevoked
	// upstreams are the registrations committed (upstreams.go).
	upstreams []upstreamChange
}

// skipped is an event the batch did not fold, and why (see skipError).
type skipped struct {
	seq              uint64
	subject, typ, id string
	err              error
}

type dirChange struct {
	key     string
	seq     *int64
	deleted bool
	row     *contract.Row // the row as committed; nil when deleted
}

// folder applies events to one bbolt transaction.
type folder struct {
	tx      *bolt.Tx
	breaker breaker.Config
	fx      *effects
	// ledger adds the batch's receipts to the ledger (ledger_batch.go); the
	// batch's committer flushes it.
	ledger *ledgerBatch
	// pre is the event being folded prepared (prepare.go), nil when it was not.
	pre *prepared
	// snapEvery and snapFullEvery override the kept snapshots' intervals (tests).
	snapEvery, snapFullEvery int
	// invocations and receipts look keys up in their buckets (lookup).
	invocations, receipts *bolt.Cursor
	// byKey, when not nil, holds the receipts' by-key entries back (a
	// rebuild's, bykey_later.go).
	byKey *byKeyLater
}

// lookup is (*bolt.Bucket).Get through *c, a cursor of bucket made once per
// batch: a Get makes a cursor, and its search path, each time.
func (f *folder) lookup(c **bolt.Cursor, bucket []byte, key []byte) []byte {
	if *c == nil {
		*c = f.tx.Bucket(bucket).Cursor()
	}
	k, v := (*c).Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// fold applies s if it passes the fold-time checks (check.go); otherwise it returns
// a *skipError and applies nothing but s's place on its key's directory subject.
func (f *folder) fold(s *eventlog.Stored) error {
	var subj wire.Subject
	if f.pre != nil {
		subj = f.pre.subj
	} else {
		subj = wire.ParseSubject(s.Subject)
	}
	if subj.Family == wire.DirectoryFamily {
		// JetStream counts every message on a key's subject, folded or not, and
		// the key's next write expects the last one: a skipped event on it that
		// were not recorded would make every later write of the key a conflict.
		if err := put(f.tx, bucketDirSeq, []byte(subj.Key), u64(s.Seq)); err != nil {
			return err
		}
	}
	r, err := checkEvent(s, subj)
	if err == nil {
		err = r.fold(f, s, subj)
	}
	if subj.Family == wire.DirectoryFamily && !isDamage(err) {
		if serr := f.snapshot(s.Seq, s.At, subj.Key); serr != nil {
			return serr
		}
	}
	return err
}

func (f *folder) directory(s *eventlog.Stored, subj wire.Subject) error {
	key := subj.Key
	m, err := checkMutation(s, key)
	if err != nil {
		return err
	}
	if m.Action == contract.ActionDelete {
		f.fx.dir = append(f.fx.dir, dirChange{key: key, deleted: true})
		return f.tx.Bucket(bucketRows).Delete([]byte(key))
	}
	row := *m.Row
	row.RowNum = 0
	b, err := json.Marshal(&row)
	if err != nil {
		return err
	}
	f.fx.dir = append(f.fx.dir, dirChange{key: key, seq: row.Seq, row: &row})
	return put(f.tx, bucketRows, []byte(key), b)
}

// requestHead is the part of a request the fold reads.
type requestHead struct {
	InvocationID string `json:"invocation_id"`
	Key          string `json:"key"`
}

// request records a request as pending. A bus client may leave its key and
// invocation id empty: checkRequest derives them as the dispatcher does. The
// first request under an invocation id stands (invocations.go): a later one is
// a duplicate the worker does not run, or capdir's re-run of an approved call.
// A bus client's request under an id another sender's request holds is the
// client's own invocation, under the id scoped to it (wire.ScopedInvocationID),
// as the worker runs it.
func (f *folder) request(s *eventlog.Stored, subj wire.Subject) error {
	var r requestHead
	var err error
	var value []byte // the request's invocations value, when prepared
	if f.pre != nil && f.pre.kind == preparedRequestKind {
		r, err, value = f.pre.request.head, f.pre.request.err, f.pre.request.value
	} else {
		r, err = checkRequest(s, subj)
	}
	if err != nil {
		return err
	}
	if v := f.lookup(&f.invocations, bucketInvocations, []byte(r.InvocationID)); v != nil {
		if !takenFrom(v, subj) {
			return nil
		}
		r.InvocationID = wire.ScopedInvocationID(subj.Client, r.InvocationID)
		if f.lookup(&f.invocations, bucketInvocations, []byte(r.InvocationID)) != nil {
			return nil
		}
		value = nil // prepared for the id unscoped
	}
	if value == nil {
		value = invocationValue(f.ledger.values, s, subj, &r)
	}
	return f.ledger.put(bucketInvocations, f.ledger.stringKey(r.InvocationID), value, "")
}

// takenFrom reports whether first, the invocations record of an id, is another
// sender's than the bus request on subj: its id is then scoped to its client.
// A record too old to name its sender is taken as its own (first stands).
func takenFrom(first []byte, subj wire.Subject) bool {
	if subj.Family != wire.BusRequestFamily {
		return false
	}
	inv, err := decodeInvocation(first)
	return err == nil && inv.Seq != 0 && inv.Client != subj.Client
}

// receiptHead is the part of a receipt the fold reads: the receipt itself is stored
// as it was appended, so decoding the rest (body, result, fingerprints) is waste.
type receiptHead struct {
	InvocationID      string    `json:"invocation_id"`
	Key               string    `json:"key"`
	Actor             string    `json:"actor"`
	FinishedAt        time.Time `json:"finished_at"`
	CredTag           string    `json:"cred_tag"`
	BreakerGeneration uint64    `json:"breaker_generation"`
	BreakerKind       string    `json:"breaker_kind"`
}

func (f *folder) receipt(s *eventlog.Stored, subj wire.Subject) error {
	var pr *preparedReceipt
	var r receiptHead
	var err error
	if f.pre != nil && f.pre.kind == preparedReceiptKind {
		pr = &f.pre.receipt
		r, err = pr.head, pr.err
	} else {
		r, err = checkReceipt(s, subj)
	}
	if err != nil {
		return err
	}
	inv := []byte(r.InvocationID)
	if f.lookup(&f.receipts, bucketReceipts, inv) != nil {
		return nil // one receipt per invocation: the first one stands
	}
	var leaf int64
	if pr != nil {
		leaf, err = f.ledger.addHash(r.InvocationID, pr.hash)
	} else {
		leaf, err = f.ledger.add(r.InvocationID, s.Data)
	}
	if err != nil {
		return err
	}
	if pr != nil {
		err = putPreparedReceipt(f, pr, leaf)
	} else {
		err = putReceipt(f.tx, f.ledger.values, []byte(r.InvocationID), s.Data, leaf)
	}
	if err != nil {
		return err
	}
	if f.byKey != nil {
		f.byKey.add(r.Key, s.Seq, s.Part, leaf)
	} else if err := f.ledger.putLeafValue(bucketByKey, f.ledger.byKeyKey(r.Key, s.Seq, s.Part), leaf); err != nil {
		return err
	}
	return f.observe(&r)
}

// observe folds the receipt into its row's breaker, as its caller's
// (wire.BreakerCaller, as the gate's check reads it).
func (f *folder) observe(r *receiptHead) error {
	kind, ok := breaker.KindNamed(r.BreakerKind)
	if !ok || kind == breaker.NotCounted {
		return nil
	}
	st, existed, err := loadBreaker(f.tx, r.Key)
	if err != nil {
		return err
	}
	if !existed && kind == breaker.UpstreamOther {
		return nil // a success on a breaker that never struck changes nothing
	}
	next := f.breaker.Observe(st, breaker.Observation{At: r.FinishedAt, Kind: kind, CredTag: r.CredTag, Generation: r.BreakerGeneration,
		Caller: wire.BreakerCaller(r.Actor)})
	return putBreaker(f.tx, next)
}

func (f *folder) breakerReset(s *eventlog.Stored, subj wire.Subject) error {
	r, err := checkReset(s, subj.Key)
	if err != nil {
		return err
	}
	st, _, err := loadBreaker(f.tx, r.Key)
	if err != nil {
		return err
	}
	return putBreaker(f.tx, f.breaker.Reset(st))
}

func loadBreaker(tx *bolt.Tx, key string) (breaker.State, bool, error) {
	v, err := get(tx, bucketBreakers, []byte(key))
	if err != nil || v == nil {
		return breaker.State{Key: key}, false, err
	}
	var st breaker.State
	if err := json.Unmarshal(v, &st); err != nil {
		return breaker.State{}, false, fmt.Errorf("breaker %s: %w", key, err)
	}
	return st, true, nil
}

func putBreaker(tx *bolt.Tx, st breaker.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return put(tx, bucketBreakers, []byte(st.Key), b)
}
