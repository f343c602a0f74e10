package projector

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// The ledger's layout. The first one kept every stored hash of the tree in the
// hashes bucket (a leaf's too), each leaf's invocation id under its index, and
// an index from invocation id back to leaf: about 190 bytes a receipt besides
// the hashes above the leaves. This one keeps a leaf's hash with its invocation
// id (one key, one checksum and one bbolt element fewer) and the way back as the
// leaf index its stored receipt starts with (receiptLeaf), which the receipt's
// own key already names, and the by-key index names a receipt's leaf (a few
// bytes) in place of its invocation id; of the hashes above the leaves it keeps those at every
// ledgerStride-th level (ledger.go). The tree, its hashes and its proofs are
// the same.
//
// ledgerLayoutKey, in the meta bucket, names the layout. A file with a tree and
// without it is in the first layout: Open moves it to this one in place
// (relayLedger), in one transaction, and checks that the tree's root did not
// change. A file without a tree is built in this one (buildLedger).
var (
	ledgerLayoutKey   = []byte("ledger/layout")
	ledgerLayoutValue = []byte("2")
)

// layoutLedger gives the file a tree in the current layout.
func layoutLedger(tx *bolt.Tx) error {
	v, err := get(tx, bucketMeta, ledgerLayoutKey)
	if err != nil || bytes.Equal(v, ledgerLayoutValue) {
		return err
	}
	if tx.Bucket(bucketMeta).Get(ledgerSizeKey) != nil {
		err = relayLedger(tx)
	} else {
		err = buildLedger(tx)
	}
	if err != nil {
		return err
	}
	if err := tx.DeleteBucket(bucketLedgerIndex); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return err
	}
	return put(tx, bucketMeta, ledgerLayoutKey, ledgerLayoutValue)
}

// checkLayout refuses a tree in the first layout, which a file opened read-only
// keeps: a node's start moves it to the current one.
func checkLayout(tx *bolt.Tx) error {
	if tx.Bucket(bucketMeta).Get(ledgerSizeKey) == nil {
		return nil
	}
	v, err := get(tx, bucketMeta, ledgerLayoutKey)
	if err != nil {
		return err
	}
	if !bytes.Equal(v, ledgerLayoutValue) {
		return fmt.Errorf("%w: the file's ledger is in the layout of an older version (start a node on it once, or capdir replay)", ErrLedger)
	}
	return nil
}

// firstLayoutHashes reads the stored hashes of a tree in the first layout.
type firstLayoutHashes struct{ tx *bolt.Tx }

func (r firstLayoutHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		v, err := get(r.tx, bucketLedgerHashes, index(x))
		if err != nil {
			return nil, err
		}
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("%w: stored hash %d is missing", ErrLedger, x)
		}
		copy(out[i][:], v)
	}
	return out, nil
}

// relayLedger moves a tree in the first layout to the current one: every leaf's
// hash from the hashes bucket to its leaf, every leaf's index into its
// receipt's stored value and its by-key entry, and the hashes at levels the
// current layout computes (ledgerStride) dropped.
func relayLedger(tx *bolt.Tx) error {
	n, err := ledgerSize(tx)
	if err != nil {
		return err
	}
	before, err := tlog.TreeHash(n, firstLayoutHashes{tx})
	if err != nil {
		return err
	}
	leaves := make(map[string]int64, n)
	for i := range n {
		x := tlog.StoredHashIndex(0, i)
		h, err := get(tx, bucketLedgerHashes, index(x))
		if err != nil {
			return err
		}
		inv, err := get(tx, bucketLedgerLeaves, index(i))
		if err != nil {
			return err
		}
		if len(h) != tlog.HashSize || len(inv) == 0 {
			return fmt.Errorf("%w: leaf %d is missing", ErrLedger, i)
		}
		rc, err := get(tx, bucketReceipts, inv)
		if err != nil {
			return err
		}
		if rc == nil {
			return fmt.Errorf("%w: the receipt of leaf %d (%s) is missing", ErrLedger, i, inv)
		}
		if _, _, ok, _ := splitLeaf(rc); ok {
			return fmt.Errorf("%w: the receipt of leaf %d (%s) already names a leaf", ErrLedger, i, inv)
		}
		leaves[string(inv)] = i
		leaf := append(bytes.Clone(h), inv...)
		stored := withLeaf(i, rc)
		if err := put(tx, bucketLedgerLeaves, index(i), leaf); err != nil {
			return err
		}
		if err := put(tx, bucketReceipts, leaf[tlog.HashSize:], stored); err != nil {
			return err
		}
	}
	// The hashes the current layout does not keep: the leaves' and those at a
	// level between two kept ones.
	var drop [][]byte
	err = tx.Bucket(bucketLedgerHashes).ForEach(func(k, _ []byte) error {
		if level, _ := tlog.SplitStoredHashIndex(int64(readU64(k))); level == 0 || !keptLevel(level) {
			drop = append(drop, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := tx.Bucket(bucketLedgerHashes).Delete(k); err != nil {
			return err
		}
	}
	// The by-key index names each receipt's leaf in place of its invocation id.
	var keys, vals [][]byte
	err = each(tx, bucketByKey, func(k, v []byte) error {
		if i, ok := leaves[string(v)]; ok {
			keys, vals = append(keys, bytes.Clone(k)), append(vals, leafValue(i))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for j, k := range keys {
		if err := put(tx, bucketByKey, k, vals[j]); err != nil {
			return err
		}
	}
	after, err := tlog.TreeHash(n, txHashes{tx})
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("%w: the tree's root moved from %s to %s in the new layout", ErrLedger, before, after)
	}
	return nil
}
