package projector

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"golang.org/x/mod/sumdb/tlog"
)

// LedgerFile is the ledger of a projection file opened read-only, for checking
// it offline (capdir verify) while no node has the file open for writing.
type LedgerFile struct{ db *bolt.DB }

// OpenLedgerFile opens the projection file at path read-only. A missing file is
// an error matching fs.ErrNotExist.
func OpenLedgerFile(path string) (*LedgerFile, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("projector: open %s: %w (another process holds it open for writing)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("projector: open %s: %w", path, err)
	}
	return &LedgerFile{db: db}, nil
}

// Close closes the file.
func (f *LedgerFile) Close() error { return f.db.Close() }

// Head is the file's ledger size and root hash, from its stored hashes.
func (f *LedgerFile) Head() (TreeHead, error) {
	var th TreeHead
	err := f.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil || tx.Bucket(bucketLedgerHashes) == nil {
			return fmt.Errorf("%w: the file has no ledger (a version before the ledger wrote it; start a node on it once, or capdir replay)", ErrLedger)
		}
		if err := checkLayout(tx); err != nil {
			return err
		}
		var err error
		th, err = headOf(tx)
		return err
	})
	return th, err
}

// Leaves calls fn with every leaf of the file's ledger in order. A value that
// fails its checksum is passed on as a leaf with Err set, not a stop: the
// caller names the receipt it belongs to.
func (f *LedgerFile) Leaves(fn func(Leaf) error) error {
	return f.db.View(func(tx *bolt.Tx) error { return eachLeaf(tx, fn) })
}

// Leaves calls fn with every leaf of the ledger in order, in one read
// transaction.
func (p *Projector) Leaves(fn func(Leaf) error) error {
	return p.db.View(func(tx *bolt.Tx) error { return eachLeaf(tx, fn) })
}

func eachLeaf(tx *bolt.Tx, fn func(Leaf) error) error {
	if err := checkLayout(tx); err != nil {
		return err
	}
	n, err := ledgerSize(tx)
	if err != nil {
		return err
	}
	for i := range n {
		l, err := leafAt(tx, i)
		if isDamage(err) {
			l = Leaf{Index: i, Err: err}
			if v := tx.Bucket(bucketLedgerLeaves).Get(index(i)); len(v) > tlog.HashSize+sumLen {
				l.InvocationID = string(v[tlog.HashSize : len(v)-sumLen])
			}
		} else if err != nil {
			return err
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}
