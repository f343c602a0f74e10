package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/contract"
	bolt "go.etcd.io/bbolt"
)

// Kept snapshots of the directory (docs/history.md): every snapshotEvery
// directory events the fold writes one, keyed by the sequence of the event it
// follows, so that a rewind loads the nearest one at or before its point and folds
// only the events after it. A snapshot is a full copy of the rows or a delta: the
// rows changed since the snapshot before it, each with its value then (none when
// deleted). The first snapshot is full, and a full one follows once at least
// max(snapshotFullEvery, the rows of the last full one) directory events have
// passed since it. The fold writes them at fixed counts of directory events,
// whatever the batches, so a replay writes the same ones and the digest covers them.
//
// Their disk cost is bounded by the log's: the deltas hold at most one entry per
// directory event, and a full snapshot of R rows follows at least R events (or
// snapshotFullEvery), so the full ones hold at most about two entries per event
// (rows grow by at most one per event), plus the first one.
var (
	bucketSnapshots = []byte("snapshots")      // seq -> snapshot (encodeSnapshot)
	bucketSnapDirty = []byte("snapshot_dirty") // key -> "" for a row changed since the last snapshot
	snapCountKey    = []byte("snap/count")     // directory events folded
	snapFullKey     = []byte("snap/full")      // snap/count at the last full snapshot
	snapFullRowsKey = []byte("snap/fullrows")  // rows of the last full snapshot
)

// snapshotEvery bounds the events a rewind folds from the log after the nearest
// snapshot; a smaller interval costs no more disk (a delta holds the rows changed
// in it), only more, smaller deltas. snapshotFullEvery bounds the deltas a rewind
// reads back to a full snapshot.
const (
	snapshotEvery     = 1024
	snapshotFullEvery = 128 * snapshotEvery
)

const (
	snapFull  byte = 'f'
	snapDelta byte = 'd'
)

// snapshot counts the directory event at seq, appended at at, on key, and writes
// a snapshot when the count reaches a multiple of the interval.
func (f *folder) snapshot(seq uint64, at time.Time, key string) error {
	return snapshotter{tx: f.tx, rows: boltRows{f.tx}, every: f.snapEvery, fullEvery: f.snapFullEvery}.count(seq, at, key)
}

// snapshotter writes the kept snapshots into tx from the directory rows holds:
// the projection's rows bucket as the fold goes, or the rows a rebuild
// (snapshots_rebuild.go) folds in memory.
type snapshotter struct {
	tx               *bolt.Tx
	rows             rowSource
	every, fullEvery int // snapshotEvery, snapshotFullEvery when zero
}

// rowSource is the directory a snapshot copies: each row's JSON as the rows bucket
// holds it, nil when absent; each in key order.
type rowSource interface {
	get(key []byte) ([]byte, error)
	each(fn func(key, v []byte) error) error
}

type boltRows struct{ tx *bolt.Tx }

func (r boltRows) get(key []byte) ([]byte, error)          { return get(r.tx, bucketRows, key) }
func (r boltRows) each(fn func(key, v []byte) error) error { return each(r.tx, bucketRows, fn) }

func (f snapshotter) count(seq uint64, at time.Time, key string) error {
	every, fullEvery := uint64(snapshotEvery), uint64(snapshotFullEvery)
	if f.every > 0 {
		every, fullEvery = uint64(f.every), uint64(f.fullEvery)
	}
	v, err := get(f.tx, bucketMeta, snapCountKey)
	if err != nil {
		return err
	}
	n := readU64(v) + 1
	if err := put(f.tx, bucketMeta, snapCountKey, u64(n)); err != nil {
		return err
	}
	if err := put(f.tx, bucketSnapDirty, []byte(key), nil); err != nil {
		return err
	}
	if n%every != 0 {
		return nil
	}
	fv, err := get(f.tx, bucketMeta, snapFullKey)
	if err != nil {
		return err
	}
	rv, err := get(f.tx, bucketMeta, snapFullRowsKey)
	if err != nil {
		return err
	}
	lastFull, fullRows := readU64(fv), readU64(rv)
	full := lastFull == 0 || n-lastFull >= max(fullEvery, fullRows)
	var buf bytes.Buffer
	kind := snapDelta
	if full {
		kind = snapFull
	}
	buf.WriteByte(kind)
	buf.Write(u64(uint64(at.UnixNano())))
	var rows uint64
	entry := func(k, v []byte) error {
		b, err := appendEntry(buf.AvailableBuffer(), k, v)
		buf.Write(b)
		rows++
		return err
	}
	if full {
		err = f.rows.each(entry)
	} else {
		err = f.tx.Bucket(bucketSnapDirty).ForEach(func(k, _ []byte) error {
			v, err := f.rows.get(k)
			if err != nil {
				return err
			}
			return entry(k, v)
		})
	}
	if err != nil {
		return err
	}
	if err := f.tx.DeleteBucket(bucketSnapDirty); err != nil {
		return err
	}
	if _, err := f.tx.CreateBucket(bucketSnapDirty); err != nil {
		return err
	}
	if full {
		if err := put(f.tx, bucketMeta, snapFullKey, u64(n)); err != nil {
			return err
		}
		if err := put(f.tx, bucketMeta, snapFullRowsKey, u64(rows)); err != nil {
			return err
		}
	}
	return put(f.tx, bucketSnapshots, u64(seq), buf.Bytes())
}

var errBadSnapshot = errors.New("projector: a damaged snapshot")

// rowHead is the part of a row a snapshot's entry carries beside the row's JSON:
// its place in the canonical order and the fields a Filter matches, so that a
// rewind orders, counts and filters the rows without decoding them, and decodes
// only the rows it answers with.
type rowHead struct {
	Seq      *int64 `json:"seq"`
	Category string `json:"category"`
	Type     string `json:"type"`
	Enabled  int    `json:"enabled"`
}

// Entry flags.
const (
	entryRow byte = 1 << iota // a row (none: deleted then)
	entrySeq                  // the row has a seq
)

// appendEntry appends the entry of key's row v (its JSON as the rows bucket holds
// it, nil when deleted) to b:
//
//	uvarint len(key) key flags [varint seq] varint enabled
//	uvarint len(category) category uvarint len(type) type uvarint len(v) v
//
// and nothing after flags for a deleted row.
func appendEntry(b, key, v []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	if v == nil {
		return append(b, 0), nil
	}
	var h rowHead
	if err := json.Unmarshal(v, &h); err != nil {
		return b, fmt.Errorf("projector: snapshot of %s: %w", key, err)
	}
	flags := entryRow
	if h.Seq != nil {
		flags |= entrySeq
	}
	b = append(b, flags)
	if h.Seq != nil {
		b = binary.AppendVarint(b, *h.Seq)
	}
	b = binary.AppendVarint(b, int64(h.Enabled))
	for _, f := range [][]byte{[]byte(h.Category), []byte(h.Type), v} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b, nil
}

// snapRow is one row of a Snapshot: its head, and either its JSON as a kept
// snapshot holds it (decoded when read) or the row folded from the log.
type snapRow struct {
	head rowHead
	raw  []byte
	row  *contract.Row
}

func (r *snapRow) decode() (contract.Row, error) {
	if r.row != nil {
		return *r.row, nil
	}
	var row contract.Row
	if err := json.Unmarshal(r.raw, &row); err != nil {
		return contract.Row{}, errBadSnapshot
	}
	return row, nil
}

// keptSnapshot is the directory at the last kept snapshot at or before at,
// built from it and the snapshots before it back to a full one; nil when there is
// none, or when one of them is damaged (the rewind then folds the log). Its rows
// stay undecoded: their JSON is copied out of the file, one copy a snapshot.
func (p *Projector) keptSnapshot(at Point, to uint64) *Snapshot {
	var snap *Snapshot
	_ = p.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSnapshots)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.Seek(u64(to + 1))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		// Newest first: the first entry a key is seen with is its row then.
		seen := map[string]snapRow{}
		var top uint64
		for ; k != nil; k, v = c.Prev() {
			body, err := unsum(bucketSnapshots, k, v)
			if err != nil || len(body) < 9 || body[0] != snapFull && body[0] != snapDelta {
				return errBadSnapshot
			}
			if top == 0 {
				if !at.includes(readU64(k), time.Unix(0, int64(readU64(body[1:9]))).UTC()) {
					continue // a time point before this snapshot
				}
				top = readU64(k)
			}
			if err := snapshotEntries(bytes.Clone(body[9:]), func(key []byte, e *entry) {
				if _, ok := seen[string(key)]; !ok {
					seen[string(key)] = e.row()
				}
			}); err != nil {
				return err
			}
			if body[0] == snapFull {
				for k, r := range seen {
					if r.raw == nil {
						delete(seen, k)
					}
				}
				snap = &Snapshot{Seq: top, rows: seen}
				return nil
			}
		}
		return nil // no full snapshot at or before the point
	})
	return snap
}

// entry is one entry of a snapshot's body as it is stored (appendEntry).
type entry struct {
	seq      *int64
	enabled  int
	cat, typ []byte
	raw      []byte // nil for a row deleted then
}

// row is the entry as a Snapshot keeps it.
func (e *entry) row() snapRow {
	if e.raw == nil {
		return snapRow{}
	}
	return snapRow{head: rowHead{Seq: e.seq, Category: string(e.cat), Type: string(e.typ), Enabled: e.enabled}, raw: e.raw}
}

// snapshotEntries calls fn with each entry of a snapshot's body (appendEntry),
// whose slices are b's.
func snapshotEntries(b []byte, fn func(key []byte, e *entry)) error {
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		l, ok := uvarint()
		if !ok || uint64(len(b)) < l {
			return nil, false
		}
		v := b[:l:l]
		b = b[l:]
		return v, true
	}
	for len(b) > 0 {
		key, ok := bytesOf()
		if !ok || len(b) == 0 {
			return errBadSnapshot
		}
		flags := b[0]
		b = b[1:]
		var e entry
		if flags&entryRow != 0 {
			if flags&entrySeq != 0 {
				s, n := binary.Varint(b)
				if n <= 0 {
					return errBadSnapshot
				}
				b = b[n:]
				e.seq = &s
			}
			en, n := binary.Varint(b)
			if n <= 0 {
				return errBadSnapshot
			}
			b = b[n:]
			e.enabled = int(en)
			var ok1, ok2, ok3 bool
			e.cat, ok1 = bytesOf()
			e.typ, ok2 = bytesOf()
			e.raw, ok3 = bytesOf()
			if !ok1 || !ok2 || !ok3 || len(e.raw) == 0 {
				return errBadSnapshot
			}
		}
		fn(key, &e)
	}
	return nil
}
