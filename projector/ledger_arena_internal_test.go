package projector

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A transaction folding a few events (a batch committed at once because a
// caller waits for it) carves its values from a chunk of their size, not a
// full arenaChunk; one folding many, or an unknown number, from full chunks.
func TestLedgerArenaSizedForTheBatch(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "a.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket(bucketInvocations); err != nil {
			return err
		}
		for _, c := range []struct{ events, want int }{{1, eventChunk}, {3, 3 * eventChunk}, {1000, arenaChunk}, {0, arenaChunk}} {
			b := newLedgerBatch(tx, c.events)
			if err := b.put(bucketInvocations, []byte("inv_a"), []byte("value"), nil); err != nil {
				return err
			}
			if got := cap(b.arena); got != c.want {
				t.Errorf("a transaction of %d events carves a chunk of %d bytes, want %d", c.events, got, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
