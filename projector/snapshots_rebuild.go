package projector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// The kept snapshots of a projection written before they existed, or in an
// earlier format of them, are built again at Open from the log: the directory
// events up to the projection's checkpoint are folded into memory and the
// snapshots written at the same counts the fold writes them, so the projection
// digests as a fresh replay of the same log does and its rewinds start from them.
//
// snapFormatKey, in the meta bucket, names the format of the kept snapshots. A
// projection without it (or with another) gets them rebuilt; an empty one gets
// it at once.
var (
	snapFormatKey   = []byte("snap/format")
	snapFormatValue = []byte("2")
)

// snapshotsCurrent reports whether the projection's snapshots are in the current
// format, and the control stream's checkpoint.
func (p *Projector) snapshotsCurrent() (bool, uint64, error) {
	var ok bool
	var ckpt uint64
	err := p.db.View(func(tx *bolt.Tx) error {
		v, err := get(tx, bucketMeta, snapFormatKey)
		if err != nil {
			return err
		}
		ok = string(v) == string(snapFormatValue)
		c, err := get(tx, bucketMeta, checkpointKey(wire.ControlStream))
		ckpt = readU64(c)
		return err
	})
	return ok, ckpt, err
}

// rebuildSnapshots builds the projection's snapshots from the log when they are
// not in the current format. Without a log it leaves them for an Open with one.
func (p *Projector) rebuildSnapshots(ctx context.Context) error {
	current, ckpt, err := p.snapshotsCurrent()
	if err != nil || current {
		return err
	}
	if ckpt > 0 && p.cfg.Log == nil {
		return nil
	}
	// Start over: an earlier format's snapshots, or a rebuild an unclean stop cut.
	err = p.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSnapshots, bucketSnapDirty} {
			if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
				return err
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		for _, k := range [][]byte{snapCountKey, snapFullKey, snapFullRowsKey} {
			if err := tx.Bucket(bucketMeta).Delete(k); err != nil {
				return err
			}
		}
		if ckpt == 0 {
			return put(tx, bucketMeta, snapFormatKey, snapFormatValue)
		}
		return nil
	})
	if err != nil || ckpt == 0 {
		return err
	}
	rows := memRows{}
	err = p.cfg.Log.ReadRange(ctx, wire.ControlStream, 1, ckpt, rewindBatch, func(b []eventlog.Stored) error {
		if i := slices.IndexFunc(b, func(s eventlog.Stored) bool { return s.Seq > ckpt }); i >= 0 {
			b = b[:i]
		}
		return p.db.Update(func(tx *bolt.Tx) error {
			s := snapshotter{tx: tx, rows: rows, every: p.cfg.snapEvery, fullEvery: p.cfg.snapFullEvery}
			for i := range b {
				ev := &b[i]
				subj := wire.ParseSubject(ev.Subject)
				if subj.Family != wire.DirectoryFamily {
					continue
				}
				if err := rows.apply(ev, subj.Key); err != nil {
					return err
				}
				if err := s.count(ev.Seq, ev.At, subj.Key); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("projector: rebuild the kept snapshots from the log: %w", err)
	}
	return p.db.Update(func(tx *bolt.Tx) error { return put(tx, bucketMeta, snapFormatKey, snapFormatValue) })
}

// memRows is the directory a rebuild folds: key -> the row's JSON as the fold
// stores it.
type memRows map[string][]byte

// apply folds the directory event ev on key as the fold does (foldable).
func (m memRows) apply(ev *eventlog.Stored, key string) error {
	_, row, ok := foldable(ev, key)
	switch {
	case !ok:
	case row == nil:
		delete(m, key)
	default:
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		m[key] = b
	}
	return nil
}

func (m memRows) get(key []byte) ([]byte, error) { return m[string(key)], nil }

func (m memRows) each(fn func(key, v []byte) error) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn([]byte(k), m[k]); err != nil {
			return err
		}
	}
	return nil
}
