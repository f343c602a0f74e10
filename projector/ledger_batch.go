package projector

import (
	"encoding/binary"
	"math/bits"

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
	// stored are the hashes stored in this transaction, in their order: the
	// stored hashes of consecutive leaves have consecutive indexes, the first
	// at first.
	stored []tlog.Hash
	first  int64
	// arena holds the values the batch stores: bbolt keeps a value until the
	// transaction commits, so each is carved from a chunk shared by many
	// instead of allocated on its own.
	arena []byte
	// values, when not nil, is where the values are carved instead: a
	// catch-up's, which keeps its chunks from one batch to the next.
	values *arena
	// key is where the keys of the batch's puts are built (indexKey).
	key []byte
	// events is how many events the transaction folds (0: unknown); the first
	// chunk of the arena and the hashes kept are sized for them.
	events int
}

// newLedgerBatch is the ledger's batch for tx, which folds events events (0
// when unknown: sized for a full batch).
func newLedgerBatch(tx *bolt.Tx, events int, values *arena) *ledgerBatch {
	return &ledgerBatch{tx: tx, events: events, values: values}
}

// eventChunk is the arena a transaction's first chunk holds per event it folds:
// a request's record, or a receipt's leaf and its share of the tree's hashes,
// fit in it. A transaction of a few events (a batch committed at once because
// someone waits for it) carves a chunk of its size, not a full arenaChunk.
const eventChunk = 512

// storedHashes appends to dst the hashes leaf n of record hash h stores:
// tlog.StoredHashesForRecordHash(n, h, b), without its allocations (a slice of
// hashes, one of indexes and one of the hashes read, for every leaf).
func (b *ledgerBatch) storedHashes(dst []tlog.Hash, n int64, h tlog.Hash) ([]tlog.Hash, error) {
	dst = append(dst, h)
	// Each trailing 1 bit of n completes a subtree, hashed with the stored
	// hash of the subtree beside it.
	for i := range bits.TrailingZeros64(uint64(n + 1)) {
		x := tlog.StoredHashIndex(i, n>>uint(i)-1)
		left, ok := b.storedAt(x)
		if !ok {
			var err error
			if left, err = readStoredHash(b.tx, x); err != nil {
				return nil, err
			}
		}
		h = tlog.NodeHash(left, h)
		dst = append(dst, h)
	}
	return dst, nil
}

// storedAt is the hash at index x when this transaction stored it.
func (b *ledgerBatch) storedAt(x int64) (tlog.Hash, bool) {
	if i := x - b.first; i >= 0 && i < int64(len(b.stored)) {
		return b.stored[i], true
	}
	return tlog.Hash{}, false
}

// add appends the receipt data of invocation inv as the tree's next leaf, and
// returns its index. The leaf's hash is stored beside inv in the leaves bucket,
// the hashes above it at a kept level (ledgerStride) in the hashes bucket.
func (b *ledgerBatch) add(inv string, data []byte) (int64, error) {
	return b.addHash(inv, tlog.RecordHash(data))
}

// addHash is add given the receipt data's tlog.RecordHash, h.
func (b *ledgerBatch) addHash(inv string, h tlog.Hash) (int64, error) {
	if !b.loaded {
		n, err := ledgerSize(b.tx)
		if err != nil {
			return 0, err
		}
		hint := 64
		if b.events > 0 {
			hint = 2*b.events + 2 // a leaf stores two hashes on average
		}
		b.size, b.loaded = n, true
		b.stored, b.first = make([]tlog.Hash, 0, hint), tlog.StoredHashIndex(0, n)
	}
	n := b.size
	var room [65]tlog.Hash
	hs, err := b.storedHashes(room[:0], n, h)
	if err != nil {
		return 0, err
	}
	base := tlog.StoredHashIndex(0, n)
	b.stored = b.stored[:base-b.first] // as it was after the last leaf added, had a put failed since
	for i, h := range hs {
		x := base + int64(i)
		b.stored = append(b.stored, h)
		if level, _ := tlog.SplitStoredHashIndex(x); level == 0 || !keptLevel(level) {
			continue // the leaf's own, kept with the leaf, or one computed when read
		}
		if err := b.put(bucketLedgerHashes, b.indexKey(x), h[:], ""); err != nil {
			return 0, err
		}
	}
	if err := b.put(bucketLedgerLeaves, b.indexKey(n), hs[0][:], inv); err != nil {
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

// The keys of a batch's puts are built in one buffer, b.key, used again for
// the next: bbolt copies a key before Put returns, and a key that was its own
// slice was an allocation (bbolt's Put hands it to its logger, so it never
// stays on the stack). A key built there is good until the next is built.

// indexKey is index(x) built in b.key.
func (b *ledgerBatch) indexKey(x int64) []byte {
	b.key = binary.BigEndian.AppendUint64(b.key[:0], uint64(x))
	return b.key
}

// stringKey is s built in b.key.
func (b *ledgerBatch) stringKey(s string) []byte {
	b.key = append(b.key[:0], s...)
	return b.key
}

// byKeyKey is byKeyKey(key, seq, part) built in b.key.
func (b *ledgerBatch) byKeyKey(key string, seq uint64, part int) []byte {
	b.key = appendByKeyKey(b.key[:0], key, seq, part)
	return b.key
}

// putLeafValue is put of leafValue(leaf).
func (b *ledgerBatch) putLeafValue(name, k []byte, leaf int64) error {
	var v [binary.MaxVarintLen64]byte
	return b.put(name, k, v[:binary.PutUvarint(v[:], uint64(leaf))], "")
}

// put is put with the value v followed by w, and its checksum, carved from the
// arena.
func (b *ledgerBatch) put(name, k, v []byte, w string) error {
	m := len(v) + len(w)
	sv := b.carve(m + sumLen)
	copy(sv[copy(sv, v):], w)
	binary.BigEndian.PutUint64(sv[m:], valueSum(k, sv[:m]))
	return b.tx.Bucket(name).Put(k, sv)
}

// carve is n bytes of the arena, kept until the transaction ends.
func (b *ledgerBatch) carve(n int) []byte {
	if b.values != nil {
		return b.values.take(n)[:n]
	}
	if cap(b.arena)-len(b.arena) < n {
		chunk := arenaChunk
		if b.arena == nil && b.events > 0 {
			chunk = min(chunk, b.events*eventChunk)
		}
		b.arena = make([]byte, 0, max(chunk, n))
	}
	sv := b.arena[len(b.arena) : len(b.arena)+n : len(b.arena)+n]
	b.arena = b.arena[:len(b.arena)+n]
	return sv
}

// flush writes the tree's size, once for the transaction, when leaves were added.
func (b *ledgerBatch) flush() error {
	if !b.changed {
		return nil
	}
	b.changed = false
	return put(b.tx, bucketMeta, ledgerSizeKey, u64(uint64(b.size)))
}
