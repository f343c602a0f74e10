package projector

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// ForgetSnapshots makes the projection file at path one a version without kept
// snapshots wrote and closed cleanly: no snapshots, no count of directory events,
// no format mark, and the seal of what is left.
func ForgetSnapshots(path string) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSnapshots, bucketSnapDirty} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		for _, k := range [][]byte{snapCountKey, snapFullKey, snapFullRowsKey, snapFormatKey} {
			if err := tx.Bucket(bucketMeta).Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return writeSeal(path)
}

// CutSnapshots drops the last bytes of every snapshot p keeps and sums it again,
// so that each passes its checksum but its entries do not decode, and returns how
// many it cut.
func CutSnapshots(p *Projector) int {
	n := 0
	p.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSnapshots)
		var keys, vals [][]byte
		b.ForEach(func(k, v []byte) error {
			body, err := unsum(bucketSnapshots, k, v)
			if err != nil || len(body) < 12 {
				return nil
			}
			keys, vals = append(keys, bytes.Clone(k)), append(vals, summed(k, body[:len(body)-3]))
			return nil
		})
		for i := range keys {
			if err := b.Put(keys[i], vals[i]); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n
}
