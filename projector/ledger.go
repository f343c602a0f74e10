package projector

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// The ledger: every receipt the projection folds is a leaf of an append-only
// Merkle tree (RFC 6962 hashing, golang.org/x/mod/sumdb/tlog), in the order the
// fold takes receipts, which is the data stream's order. A leaf is the receipt's
// data exactly as the log holds it (the bytes getReceipt gives back), so a byte
// changed in a copy of a receipt changes its leaf hash. The tree is derived state:
// its hashes live in the projection file, are covered by Digest, and a replay of
// the same log builds the same tree on every node. Signed checkpoints of it and
// the proofs built from it are package projector/ledger's.
var (
	// bucketLedgerHashes holds the tree's stored hashes above its leaves
	// (tlog.StoredHashIndex -> 32 bytes): every complete subtree's hash.
	bucketLedgerHashes = []byte("ledger_hashes")
	// bucketLedgerLeaves maps a leaf index (8 bytes) to the leaf's hash (32
	// bytes) followed by its receipt's invocation id. The way back, from an
	// invocation id to its leaf, is the index its stored receipt starts with
	// (receiptLeaf, receipt_store.go).
	bucketLedgerLeaves = []byte("ledger_leaves")
	// bucketLedgerIndex mapped an invocation id to its receipt's leaf index in
	// the ledger's first layout (ledger_layout.go); no file this version opens
	// keeps it.
	bucketLedgerIndex = []byte("ledger_index")
)

// ledgerSizeKey, in the meta bucket, is the number of leaves, absent while there
// are none. A file with receipts and without it was written by an older version:
// Open builds its tree from the receipts it holds (buildLedger).
var ledgerSizeKey = []byte("ledger/size")

// TreeHead is the ledger's size and root hash at one point.
type TreeHead struct {
	Size int64
	Root tlog.Hash
}

// Leaf is one leaf of the ledger: its index, its receipt's invocation id, the
// hash the tree stores for it and the receipt's data as the projection holds it.
type Leaf struct {
	Index        int64
	InvocationID string
	Hash         tlog.Hash // the tree's stored leaf hash
	Data         []byte    // the receipt's data; its tlog.RecordHash should be Hash
	// Err is set (and Hash or Data left empty) when a value of the leaf failed
	// its checksum in the file (LedgerFile.Leaves).
	Err error
}

// txHashes reads the tree's stored hashes in tx.
type txHashes struct{ tx *bolt.Tx }

func (r txHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		var err error
		if out[i], err = readStoredHash(r.tx, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ledgerStride says which of the tree's levels the file keeps: those that are
// a multiple of it. tlog's layout stores, beside every leaf's hash, about one
// hash above the leaves per leaf (half of them at level 1, a quarter at level
// 2, ...); the file keeps the leaves' and one in sixteen of the others, and a
// hash at a level between is computed from the at most 2^(ledgerStride-1)
// hashes the file keeps at the level below it. The tree is the same.
const ledgerStride = 4

// keptLevel reports whether the file keeps the tree's hashes at level.
func keptLevel(level int) bool { return level%ledgerStride == 0 }

// readStoredHash is the tree's stored hash x (tlog.StoredHashIndex): a leaf's
// (level 0) from the leaves bucket, where it comes before the leaf's
// invocation id, one at a kept level from the hashes bucket, and one at a level
// between from the hashes kept below it.
func readStoredHash(tx *bolt.Tx, x int64) (tlog.Hash, error) {
	level, n := tlog.SplitStoredHashIndex(x)
	if !keptLevel(level) {
		k := level % ledgerStride
		hs := make([]tlog.Hash, 1<<k)
		for j := range hs {
			var err error
			if hs[j], err = readStoredHash(tx, tlog.StoredHashIndex(level-k, n<<k+int64(j))); err != nil {
				return tlog.Hash{}, err
			}
		}
		for len(hs) > 1 {
			for j := range len(hs) / 2 {
				hs[j] = tlog.NodeHash(hs[2*j], hs[2*j+1])
			}
			hs = hs[:len(hs)/2]
		}
		return hs[0], nil
	}
	var h tlog.Hash
	var v []byte
	var err error
	if level == 0 {
		if v, err = get(tx, bucketLedgerLeaves, index(n)); len(v) > tlog.HashSize {
			v = v[:tlog.HashSize]
		}
	} else {
		v, err = get(tx, bucketLedgerHashes, index(x))
	}
	if err != nil {
		return h, err
	}
	if len(v) != tlog.HashSize {
		return h, fmt.Errorf("%w: stored hash %d is missing", ErrLedger, x)
	}
	copy(h[:], v)
	return h, nil
}

func ledgerSize(tx *bolt.Tx) (int64, error) {
	v, err := get(tx, bucketMeta, ledgerSizeKey)
	return int64(readU64(v)), err
}

// buildLedger gives a file an older version wrote its tree: the receipts it holds,
// in the order they were folded (their data-stream sequence, which the by-key
// index records), as a replay would add them. A file with a tree is left alone,
// and so is one without receipts (whose digest stays an empty projection's).
func buildLedger(tx *bolt.Tx) error {
	if v := tx.Bucket(bucketMeta).Get(ledgerSizeKey); v != nil {
		return nil
	}
	type folded struct {
		seq uint64
		key []byte // its by-key index entry
		inv string
	}
	var all []folded
	err := each(tx, bucketByKey, func(k, v []byte) error {
		i := bytes.IndexByte(k, 0) // keys hold no 0 byte; the sequence may
		if i < 0 || len(k)-i-1 != 8 {
			return nil
		}
		all = append(all, folded{seq: binary.BigEndian.Uint64(k[i+1:]), key: bytes.Clone(k), inv: string(v)})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	led := newLedgerBatch(tx, 0, nil)
	for _, f := range all {
		v, err := get(tx, bucketReceipts, []byte(f.inv))
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		v = bytes.Clone(v)
		data, err := receiptData([]byte(f.inv), v)
		if err != nil {
			return err
		}
		i, err := led.add(f.inv, data)
		if err != nil {
			return err
		}
		// The receipt's stored value gains its leaf's index (in place of one a
		// tree that was lost gave it).
		if _, rest, ok, _ := splitLeaf(v); ok {
			v = rest
		}
		if err := put(tx, bucketReceipts, []byte(f.inv), withLeaf(i, v)); err != nil {
			return err
		}
		// And its by-key entry names the leaf in place of the invocation id.
		if err := put(tx, bucketByKey, f.key, leafValue(i)); err != nil {
			return err
		}
	}
	return led.flush()
}

// LedgerHead is the ledger's current size and root hash.
func (p *Projector) LedgerHead() (TreeHead, error) {
	var th TreeHead
	err := p.view(func(tx *bolt.Tx) error {
		var err error
		th, err = headOf(tx)
		return err
	})
	return th, err
}

func headOf(tx *bolt.Tx) (TreeHead, error) {
	n, err := ledgerSize(tx)
	if err != nil {
		return TreeHead{}, err
	}
	root, err := tlog.TreeHash(n, txHashes{tx})
	return TreeHead{Size: n, Root: root}, err
}

// LedgerTreeHash is the root hash of the ledger's first size leaves: a
// *LedgerSizeError when the ledger holds fewer.
func (p *Projector) LedgerTreeHash(size int64) (tlog.Hash, error) {
	var h tlog.Hash
	err := p.view(func(tx *bolt.Tx) error {
		if err := checkSize(tx, size); err != nil {
			return err
		}
		var err error
		h, err = tlog.TreeHash(size, txHashes{tx})
		return err
	})
	return h, err
}

// LedgerLeaf is the leaf of invocation inv's receipt: ErrNotFound when the ledger
// has none for it.
func (p *Projector) LedgerLeaf(inv string) (Leaf, error) {
	var l Leaf
	err := p.view(func(tx *bolt.Tx) error {
		i, ok, err := receiptLeafIndex(tx, []byte(inv))
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
		if l, err = leafAt(tx, i); err != nil {
			return err
		}
		if l.InvocationID != inv {
			return fmt.Errorf("%w: the receipt of %s names leaf %d, which is %s's", ErrLedger, inv, i, l.InvocationID)
		}
		l.Data = bytes.Clone(l.Data) // valid past the transaction
		return nil
	})
	return l, err
}

func leafAt(tx *bolt.Tx, i int64) (Leaf, error) {
	v, err := get(tx, bucketLedgerLeaves, index(i))
	if err != nil {
		return Leaf{}, err
	}
	if v == nil {
		return Leaf{}, fmt.Errorf("%w: leaf %d is missing", ErrLedger, i)
	}
	return leafFrom(tx, i, v)
}

// leafFrom is leaf i, whose stored value (its sum checked) is v: its hash, its
// invocation id and its receipt's data (nil when the receipt is missing).
func leafFrom(tx *bolt.Tx, i int64, v []byte) (Leaf, error) {
	if len(v) <= tlog.HashSize {
		return Leaf{}, fmt.Errorf("%w: leaf %d holds %d bytes, not a hash and an invocation id", ErrLedger, i, len(v))
	}
	inv := v[tlog.HashSize:]
	data, err := getReceipt(tx, inv)
	if err != nil {
		return Leaf{}, err
	}
	l := Leaf{Index: i, InvocationID: string(inv), Data: data}
	copy(l.Hash[:], v)
	return l, nil
}

// InclusionProof proves that leaf index is in the tree of size leaves.
func (p *Projector) InclusionProof(index, size int64) (tlog.RecordProof, error) {
	var proof tlog.RecordProof
	err := p.view(func(tx *bolt.Tx) error {
		if err := checkSize(tx, size); err != nil {
			return err
		}
		if index < 0 || index >= size {
			return &LedgerSizeError{Asked: index + 1, Size: size}
		}
		var err error
		proof, err = tlog.ProveRecord(size, index, txHashes{tx})
		return err
	})
	return proof, err
}

// ConsistencyProof proves that the tree of to leaves extends the tree of from
// leaves (0 < from <= to <= the ledger's size).
func (p *Projector) ConsistencyProof(from, to int64) (tlog.TreeProof, error) {
	var proof tlog.TreeProof
	err := p.view(func(tx *bolt.Tx) error {
		if err := checkSize(tx, to); err != nil {
			return err
		}
		var err error
		proof, err = tlog.ProveTree(to, from, txHashes{tx})
		return err
	})
	return proof, err
}

func checkSize(tx *bolt.Tx, size int64) error {
	n, err := ledgerSize(tx)
	if err != nil {
		return err
	}
	if size < 0 || size > n {
		return &LedgerSizeError{Asked: size, Size: n}
	}
	return nil
}
