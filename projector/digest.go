package projector

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Digest is a stable SHA-256 over every bucket, key and value of the projection,
// in bbolt's sorted order. Two projections of the same log have the same digest.
// It covers what the values hold, not how the file stores them: their checksums
// (sum.go), checked on the way, and the file's and the snapshots' format marks
// and the fold version that built it
// (foldversion.go) stay out of it, and a receipt counts as its data, however it is stored
// (receipt_store.go), so a file an older version wrote digests as its replay does.
func (p *Projector) Digest() (string, error) {
	return digestDB(p.db)
}

func digestDB(db *bolt.DB) (string, error) {
	h := sha256.New()
	var n [8]byte
	write := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	err := db.View(func(tx *bolt.Tx) error {
		summed := summedFile(tx)
		for _, name := range allBuckets {
			write(name)
			b := tx.Bucket(name)
			if b == nil {
				continue // a file an older version wrote: an empty bucket
			}
			err := b.ForEach(func(k, v []byte) error {
				if bytes.Equal(name, bucketMeta) && (bytes.Equal(k, snapFormatKey) || bytes.Equal(k, ledgerLayoutKey) || bytes.Equal(k, foldVersionKey)) {
					return nil // how the snapshots and the ledger are stored, and which fold built them (snapshots_rebuild.go, ledger_layout.go, foldversion.go)
				}
				if summed {
					if bytes.Equal(name, bucketMeta) && bytes.Equal(k, formatKey) {
						return nil
					}
					var err error
					if v, err = unsum(name, k, v); err != nil {
						return err
					}
				}
				if bytes.Equal(name, bucketReceipts) {
					var err error
					if v, err = receiptData(k, v); err != nil {
						return err
					}
				}
				write(k)
				write(v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// FileDigest opens a projection file read-only and returns its Digest. A missing
// file is an error matching fs.ErrNotExist.
func FileDigest(path string) (string, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return "", fmt.Errorf("projector: open %s: %w (another process holds it open for writing)", path, err)
	}
	if err != nil {
		return "", fmt.Errorf("projector: open %s: %w", path, err)
	}
	defer db.Close()
	return digestDB(db)
}
