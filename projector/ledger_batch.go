package projector

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// ledgerBatch adds the leaves of one transaction to the ledger: the tree's size is
// read once and written once (flush), and the hashes stored in the transaction are
// kept at hand, so a new leaf's subtree hashes, which are mostly the last ones
// stored, are not read back from bbolt. Each hash is written once. The tree it
// leaves is the one appending the leaves one at a time gives.
type ledgerBatch struct {
	tx      *bolt.Tx
	size    int64 // the ledger's size with the leaves added so far
	loaded  bool
	changed bool
	stored  map[int64]tlog.Hash // hashes stored in this transaction
	// arena holds the values the batch stores: bbolt keeps a value until the
	// transaction commits, so each is carved from a chunk shared by many
	// instead of allocated on its own.
	arena []byte
	// events is how many events the transaction folds (0: unknown); the first
	// chunk of the arena and the hashes' map are sized for them.
	events int
}

// newLedgerBatch is the ledger's batch for tx, which folds events events (0
// when unknown: sized for a full batch).
func newLedgerBatch(tx *bolt.Tx, events int) *ledgerBatch {
	return &ledgerBatch{tx: tx, events: events}
}

// eventChunk is the arena a transaction's first chunk holds per event it folds:
// a request's record, or a receipt's leaf and its share of the tree's hashes,
// fit in it. A transaction of a few events (a batch committed at once because
// someone waits for it) carves a chunk of its size, not a full arenaChunk.
const eventChunk = 512

// ReadHashes reads the hashes stored in this transaction from memory and the
// others from bbolt (tlog.HashReader).
func (b *ledgerBatch) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if h, ok := b.stored[x]; ok {
			out[i] = h
			continue
		}
		var err error
		if out[i], err = readStoredHash(b.tx, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// add appends the receipt data of invocation inv as the tree's next leaf, and
// returns its index. The leaf's hash is stored beside inv in the leaves bucket,
// the hashes above it at a kept level (ledgerStride) in the hashes bucket.
func (b *ledgerBatch) add(inv string, data []byte) (int64, error) {
	if !b.loaded {
		n, err := ledgerSize(b.tx)
		if err != nil {
			return 0, err
		}
		hint := 64
		if b.events > 0 {
			hint = min(hint, 2*b.events+2) // a leaf stores two hashes on average
		}
		b.size, b.loaded, b.stored = n, true, make(map[int64]tlog.Hash, hint)
	}
	n := b.size
	hs, err := tlog.StoredHashes(n, data, b)
	if err != nil {
		return 0, err
	}
	base := tlog.StoredHashIndex(0, n)
	for i, h := range hs {
		x := base + int64(i)
		b.stored[x] = h
		if level, _ := tlog.SplitStoredHashIndex(x); level == 0 || !keptLevel(level) {
			continue // the leaf's own, kept with the leaf, or one computed when read
		}
		if err := b.put(bucketLedgerHashes, index(x), h[:], nil); err != nil {
			return 0, err
		}
	}
	if err := b.put(bucketLedgerLeaves, index(n), hs[0][:], []byte(inv)); err != nil {
		return 0, err
	}
	b.size, b.changed = n+1, true
	return n, nil
}

// index is x as a ledger key; bbolt copies the keys it is given.
func index(x int64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(x))
	return k[:]
}

// arenaChunk is the size of the chunks ledgerBatch.arena is carved from: the
// values of about a hundred leaves.
const arenaChunk = 16 << 10

// put is put with the value v followed by w, and its checksum, carved from the
// arena.
func (b *ledgerBatch) put(name, k, v, w []byte) error {
	m := len(v) + len(w)
	n := m + sumLen
	if cap(b.arena)-len(b.arena) < n {
		chunk := arenaChunk
		if b.arena == nil && b.events > 0 {
			chunk = min(chunk, b.events*eventChunk)
		}
		b.arena = make([]byte, 0, max(chunk, n))
	}
	sv := b.arena[len(b.arena) : len(b.arena)+n : len(b.arena)+n]
	b.arena = b.arena[:len(b.arena)+n]
	copy(sv[copy(sv, v):], w)
	binary.BigEndian.PutUint64(sv[m:], valueSum(k, sv[:m]))
	return b.tx.Bucket(name).Put(k, sv)
}

// flush writes the tree's size, once for the transaction, when leaves were added.
func (b *ledgerBatch) flush() error {
	if !b.changed {
		return nil
	}
	b.changed = false
	return put(b.tx, bucketMeta, ledgerSizeKey, u64(uint64(b.size)))
}
