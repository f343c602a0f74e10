package projector

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bbolt never gives a file's free pages back to the file system: a projection
// that once held more keeps its size. Compact copies the projection into a new
// file, every bucket's pages filled whole and every receipt in the compact
// encoding (receipt_store.go: receipts an older version stored as JSON shrink to
// about a quarter), and swaps it in as Rebuild does. What the values hold does
// not change, so the digest stays the same.

// compactTxBytes bounds the bytes of keys and values Compact copies in one
// transaction of the new file.
const compactTxBytes = 64 << 20

// CompactStats are a Compact's sizes, in bytes, of the file before and after.
type CompactStats struct{ Before, After int64 }

// Compact copies the projection file at path into a compact one and renames it
// over path. No projector may have path open (a node holds its data dir's lock
// while it has; the caller takes it first). A damaged file is refused with an
// error matching ErrDamaged, and a missing one with one matching fs.ErrNotExist;
// either way nothing changes.
func Compact(path string) (CompactStats, error) {
	var st CompactStats
	fi, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("projector: %w", err)
	}
	st.Before = fi.Size()
	_, err = os.Stat(dirtyMarker(path))
	reason, err := damage(path, err == nil)
	if err != nil {
		return st, err
	}
	if reason != "" {
		return st, &CompactDamagedError{Path: path, Reason: reason}
	}
	tmp := path + ".compact"
	for _, stale := range []string{tmp, sealPath(tmp)} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return st, fmt.Errorf("projector: %w", err)
		}
	}
	if err := copyCompact(tmp, path); err != nil {
		os.Remove(tmp)
		return st, err
	}
	if err := writeSeal(tmp); err != nil {
		return st, err
	}
	if err := swapIn(tmp, path); err != nil {
		return st, err
	}
	if fi, err := os.Stat(path); err == nil {
		st.After = fi.Size()
	}
	return st, nil
}

// copyCompact copies every bucket of the file at from into a new file at to.
func copyCompact(to, from string) error {
	src, err := bolt.Open(from, 0o600, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("projector: open %s: %w", from, err)
	}
	defer src.Close()
	dst, err := bolt.Open(to, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true})
	if err != nil {
		return fmt.Errorf("projector: open %s: %w", to, err)
	}
	err = src.View(func(stx *bolt.Tx) error {
		summed := summedFile(stx)
		return stx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return copyBucket(dst, name, b, summed)
		})
	})
	var used int64
	if err == nil {
		err = dst.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	// bbolt grows a file ahead of its pages (to the next power of two, then by
	// 16 MiB); the copy keeps only the pages it uses, and bbolt grows it again
	// when it writes.
	if err == nil {
		err = truncateSynced(to, used)
	}
	if err != nil {
		return fmt.Errorf("projector: compact %s: %w", from, err)
	}
	return nil
}

func truncateSynced(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyBucket copies bucket name into dst, in transactions of up to
// compactTxBytes, with its receipts in the compact encoding.
func copyBucket(dst *bolt.DB, name []byte, src *bolt.Bucket, summed bool) error {
	c := src.Cursor()
	k, v := c.First()
	for first := true; first || k != nil; first = false {
		err := dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			b.FillPercent = 1.0
			for n := 0; k != nil && n < compactTxBytes; k, v = c.Next() {
				if v == nil {
					return fmt.Errorf("bucket %s holds a bucket %q", name, k)
				}
				if string(name) == string(bucketReceipts) {
					if v, err = recompact(k, v, summed); err != nil {
						return err
					}
				}
				if err := b.Put(k, v); err != nil {
					return err
				}
				n += len(k) + len(v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recompact is a stored receipt in the compact encoding, with its checksum when
// the file's values carry them.
func recompact(k, sv []byte, withSums bool) ([]byte, error) {
	v := sv
	if withSums {
		var err error
		if v, err = unsum(bucketReceipts, k, sv); err != nil {
			return nil, err
		}
	}
	data, err := receiptData(k, v)
	if err != nil {
		return nil, err
	}
	if leaf, _, ok, _ := splitLeaf(v); ok {
		v = withLeaf(leaf, encodeReceiptFor(k, data))
	} else {
		v = encodeReceiptFor(k, data)
	}
	if withSums {
		return summed(k, v), nil
	}
	return v, nil
}

// swapIn renames the finished file tmp (closed, with its seal) over final. The
// old file's seal goes first and the new one's follows the file, so a crash in
// between never pairs a seal with the other file.
func swapIn(tmp, final string) error {
	if err := os.Remove(sealPath(final)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("projector: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("projector: swap in %s: %w", final, err)
	}
	if err := os.Rename(sealPath(tmp), sealPath(final)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("projector: swap in the seal of %s: %w", final, err)
	}
	os.Remove(dirtyMarker(final))
	return syncDir(filepath.Dir(final))
}
