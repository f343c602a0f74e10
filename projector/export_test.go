package projector

import (
	"bytes"

	"github.com/capdir/capdir/eventlog"
	bolt "go.etcd.io/bbolt"
)

// SetBeforeCommit installs the in-transaction failpoint used by crash tests.
func SetBeforeCommit(c *Config, fn func(stream string, batch []eventlog.Stored) error) {
	c.beforeCommit = fn
}

// SetByKeyLaterLimit makes a rebuild put the by-key entries it holds back
// whenever it holds n (the default when 0).
func SetByKeyLaterLimit(c *Config, n int) { c.byKeyLimit = n }

// SetLingerFrom makes batches linger from n waiting events instead of two.
func SetLingerFrom(c *Config, n int) { c.lingerFrom = n }

// RevokedLeeway is how long past its exp a revocation stays in memory.
const RevokedLeeway = revokedLeeway

// SetSnapshotEvery makes the fold keep a snapshot every n directory events, and a
// full one at least every full events.
func SetSnapshotEvery(c *Config, n, full int) { c.snapEvery, c.snapFullEvery = n, full }

// SnapshotsSize is how many snapshots p keeps and their bytes.
func SnapshotsSize(p *Projector) (count, size int) {
	p.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSnapshots).ForEach(func(k, v []byte) error {
			count, size = count+1, size+len(v)
			return nil
		})
	})
	return count, size
}

// DamageSnapshots flips a byte in the middle of every snapshot p keeps, under its
// checksum, and returns how many it damaged.
func DamageSnapshots(p *Projector) int {
	n := 0
	p.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSnapshots)
		var keys, vals [][]byte
		b.ForEach(func(k, v []byte) error {
			keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
			return nil
		})
		for i := range keys {
			vals[i][len(vals[i])/2] ^= 0xff
			if err := b.Put(keys[i], vals[i]); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n
}
