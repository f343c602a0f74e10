package projector

import (
	"bytes"
	"os"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// EncodeReceipt and DecodeReceipt are the receipts bucket's encoding.
var (
	EncodeReceipt = encodeReceipt
	DecodeReceipt = decodeReceipt
)

// StoreReceiptsAsJSON rewrites every receipt of the projection file at path as
// its JSON, as versions before the compact encoding stored it, and returns the
// bytes the receipts' values held before and after (checksums included). It
// removes the file's seal, which no longer matches.
func StoreReceiptsAsJSON(path string) (compact, plain int, err error) {
	if err := os.Remove(path + ".sum"); err != nil {
		return 0, 0, err
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReceipts)
		var keys, vals [][]byte
		err := b.ForEach(func(k, sv []byte) error {
			compact += len(sv)
			data, err := getReceipt(tx, k)
			keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(data))
			return err
		})
		for i := range keys {
			if err != nil {
				break
			}
			leaf, ok, lerr := receiptLeafIndex(tx, keys[i])
			if err = lerr; err == nil && ok {
				vals[i] = withLeaf(leaf, vals[i])
			}
			if err == nil {
				err = put(tx, bucketReceipts, keys[i], vals[i])
				plain += len(vals[i]) + sumLen
			}
		}
		return err
	})
	return compact, plain, err
}

// ToFirstLedgerLayout rewrites the ledger of the projection file at path in the
// layout versions before ledger_layout.go wrote: every stored hash of the tree
// (every leaf's too) in the hashes bucket, the leaves holding invocation ids
// alone, an index from invocation id to leaf, receipts without their leaf's
// index and no layout mark. It removes the file's seal, which no longer matches.
func ToFirstLedgerLayout(path string) error {
	if err := os.Remove(path + ".sum"); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		n, err := ledgerSize(tx)
		if err != nil {
			return err
		}
		var invs [][]byte // by leaf
		if err := tx.DeleteBucket(bucketLedgerHashes); err != nil {
			return err
		}
		for _, b := range [][]byte{bucketLedgerHashes, bucketLedgerIndex} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		for i := range n {
			v, err := get(tx, bucketLedgerLeaves, index(i))
			if err != nil {
				return err
			}
			inv := bytes.Clone(v[tlog.HashSize:])
			invs = append(invs, inv)
			sv, err := get(tx, bucketReceipts, inv)
			if err != nil {
				return err
			}
			_, rest, _, err := splitLeaf(sv)
			if err != nil {
				return err
			}
			rest = bytes.Clone(rest)
			data, err := decodeReceiptFor(inv, rest)
			if err != nil {
				return err
			}
			hs, err := tlog.StoredHashes(i, data, firstLayoutHashes{tx})
			if err != nil {
				return err
			}
			for j, h := range hs {
				k := index(tlog.StoredHashIndex(0, i) + int64(j))
				if err := tx.Bucket(bucketLedgerHashes).Put(k, summed(k, h[:])); err != nil {
					return err
				}
			}
			for _, p := range []struct{ b, k, v []byte }{
				{bucketLedgerLeaves, index(i), inv},
				{bucketLedgerIndex, inv, u64(uint64(i))},
				{bucketReceipts, inv, rest},
			} {
				if err := tx.Bucket(p.b).Put(p.k, summed(p.k, p.v)); err != nil {
					return err
				}
			}
		}
		var keys, vals [][]byte
		err = each(tx, bucketByKey, func(k, v []byte) error {
			leaf, ok := readLeafValue(v)
			if !ok {
				return nil
			}
			keys, vals = append(keys, bytes.Clone(k)), append(vals, invs[leaf])
			return nil
		})
		if err != nil {
			return err
		}
		for i, k := range keys {
			if err := put(tx, bucketByKey, k, vals[i]); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Delete(ledgerLayoutKey)
	})
}
