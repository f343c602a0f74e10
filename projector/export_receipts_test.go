package projector

import (
	"bytes"
	"os"

	bolt "go.etcd.io/bbolt"
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
			if err == nil {
				err = put(tx, bucketReceipts, keys[i], vals[i])
				plain += len(vals[i]) + sumLen
			}
		}
		return err
	})
	return compact, plain, err
}
