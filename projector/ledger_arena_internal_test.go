package projector

import (
	"fmt"
	"math/bits"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/capdir/capdir/internal/allocstest"
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
			b := newLedgerBatch(tx, c.events, nil)
			if err := b.put(bucketInvocations, []byte("inv_a"), []byte("value"), ""); err != nil {
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

// memHashes is a tlog.HashReader of hashes held in a map.
type memHashes map[int64]tlog.Hash

func (m memHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = m[x]
	}
	return out, nil
}

// ledgerDB is a bbolt file of its own for tb, opened with opts, holding every
// bucket of a projection; closed when tb ends.
func ledgerDB(tb testing.TB, opts *bolt.Options) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "l.db"), 0o600, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return db
}

// The hashes a batch stores for each leaf are tlog's, whether the hashes it
// reads were stored in its own transaction or in one before; and adding a leaf
// allocates nothing for them.
func TestLedgerBatchStoresTlogsHashes(t *testing.T) {
	db := ledgerDB(t, nil)
	want := memHashes{}
	const leaves, perTx = 1100, 37
	for n := int64(0); n < leaves; {
		err := db.Update(func(tx *bolt.Tx) error {
			b := newLedgerBatch(tx, perTx, nil)
			for end := min(n+perTx, leaves); n < end; n++ {
				h := tlog.RecordHash([]byte(fmt.Sprint("receipt ", n)))
				hs, err := tlog.StoredHashesForRecordHash(n, h, want)
				if err != nil {
					return err
				}
				for i, h := range hs {
					want[tlog.StoredHashIndex(0, n)+int64(i)] = h
				}
				if leaf, err := b.addHash(fmt.Sprint("inv_", n), h); err != nil || leaf != n {
					return fmt.Errorf("leaf %d added as %d: %v", n, leaf, err)
				}
				var room [65]tlog.Hash
				got, err := b.storedHashes(room[:0], n+1, tlog.Hash{})
				if err != nil {
					return err
				}
				if n+1 < leaves && len(got) != 1+bits.TrailingZeros64(uint64(n+2)) {
					return fmt.Errorf("leaf %d: %d hashes", n+1, len(got))
				}
				inTx := true // the hashes leaf n+1 reads were stored in this transaction
				for i := range bits.TrailingZeros64(uint64(n + 2)) {
					_, ok := b.storedAt(tlog.StoredHashIndex(i, (n+1)>>uint(i)-1))
					inTx = inTx && ok
				}
				if allocs := allocstest.PerRun(t, 10, func() { b.storedHashes(room[:0], n+1, tlog.Hash{}) }); inTx && allocs != 0 {
					return fmt.Errorf("leaf %d: storedHashes allocates %v times", n+1, allocs)
				}
				for i, h := range hs {
					if got, _ := b.storedAt(tlog.StoredHashIndex(0, n) + int64(i)); got != h {
						return fmt.Errorf("leaf %d: hash %d is not tlog's", n, i)
					}
				}
			}
			return b.flush()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.View(func(tx *bolt.Tx) error {
		for n := int64(1); n <= leaves; n++ {
			got, err := tlog.TreeHash(n, txHashes{tx})
			if err != nil {
				return err
			}
			if w, _ := tlog.TreeHash(n, want); got != w {
				return fmt.Errorf("tree of %d leaves: %s, want %s", n, got, w)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkLedgerBatchAdd adds leaves to the ledger in transactions of a
// rebuild's batch size, 8,192: the time and allocations of each leaf's hashes
// and puts, the commit included.
func BenchmarkLedgerBatchAdd(b *testing.B) {
	db := ledgerDB(b, &bolt.Options{NoSync: true})
	const perTx = 8192
	hashes := make([]tlog.Hash, perTx)
	invs := make([]string, perTx)
	for i := range hashes {
		hashes[i] = tlog.RecordHash([]byte(fmt.Sprint("receipt ", i)))
		invs[i] = fmt.Sprintf("inv_%026d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		err := db.Update(func(tx *bolt.Tx) error {
			lb := newLedgerBatch(tx, perTx, nil)
			for i := 0; i < perTx && n < b.N; i, n = i+1, n+1 {
				if _, err := lb.addHash(invs[i], hashes[i]); err != nil {
					return err
				}
			}
			return lb.flush()
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
