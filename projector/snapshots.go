package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
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
	snapFull  byte = 'F'
	snapDelta byte = 'D'
)

// snapshot counts the directory event at seq, appended at at, on key, and writes
// a snapshot when the count reaches a multiple of the interval.
func (f *folder) snapshot(seq uint64, at time.Time, key string) error {
	every, fullEvery := uint64(snapshotEvery), uint64(snapshotFullEvery)
	if f.snapEvery > 0 {
		every, fullEvery = uint64(f.snapEvery), uint64(f.snapFullEvery)
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
	entry := func(k, v []byte) {
		buf.Write(binary.AppendUvarint(nil, uint64(len(k))))
		buf.Write(k)
		buf.Write(binary.AppendUvarint(nil, uint64(len(v))))
		buf.Write(v)
		rows++
	}
	if full {
		err = each(f.tx, bucketRows, func(k, v []byte) error { entry(k, v); return nil })
	} else {
		err = f.tx.Bucket(bucketSnapDirty).ForEach(func(k, _ []byte) error {
			v, err := get(f.tx, bucketRows, k)
			entry(k, v)
			return err
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

// keptSnapshot is the directory at the last kept snapshot at or before at,
// built from it and the snapshots before it back to a full one; nil when there is
// none, or when one of them is damaged (the rewind then folds the log).
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
		// Newest first: the first value a key is seen with is its value then.
		seen := map[string][]byte{}
		var top uint64
		for ; k != nil; k, v = c.Prev() {
			body, err := unsum(bucketSnapshots, k, v)
			if err != nil || len(body) < 9 {
				return errBadSnapshot
			}
			if top == 0 {
				if !at.includes(readU64(k), time.Unix(0, int64(readU64(body[1:9]))).UTC()) {
					continue // a time point before this snapshot
				}
				top = readU64(k)
			}
			if err := snapshotEntries(body[9:], func(key string, row []byte) {
				if _, ok := seen[key]; !ok {
					seen[key] = row
				}
			}); err != nil {
				return err
			}
			if body[0] == snapFull {
				s, err := decodeSnapshot(top, seen)
				if err != nil {
					return err
				}
				snap = s
				return nil
			}
		}
		return nil // no full snapshot at or before the point
	})
	return snap
}

// decodeSnapshot decodes the rows of seen (key -> row JSON, nil when deleted)
// into the snapshot at seq, on every core: decoding is most of a rewind's cost.
func decodeSnapshot(seq uint64, seen map[string][]byte) (*Snapshot, error) {
	keys := make([]string, 0, len(seen))
	for k, v := range seen {
		if v != nil {
			keys = append(keys, k)
		}
	}
	parts := runtime.GOMAXPROCS(0)
	decoded := make([]contract.Row, len(keys))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += parts {
				if err := json.Unmarshal(seen[keys[i]], &decoded[i]); err != nil {
					errs[w] = errBadSnapshot
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &Snapshot{Seq: seq, rows: make(map[string]contract.Row, len(keys))}
	for i, k := range keys {
		s.rows[k] = decoded[i]
	}
	return s, nil
}

// snapshotEntries calls fn with each entry of a snapshot's body; row is nil for
// a row deleted then.
func snapshotEntries(b []byte, fn func(key string, row []byte)) error {
	for len(b) > 0 {
		kl, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < kl {
			return errBadSnapshot
		}
		b = b[n:]
		key := string(b[:kl])
		b = b[kl:]
		vl, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < vl {
			return errBadSnapshot
		}
		b = b[n:]
		var row []byte
		if vl > 0 {
			row = b[:vl]
		}
		b = b[vl:]
		fn(key, row)
	}
	return nil
}
