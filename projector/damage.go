package projector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A damaged projection is never served. Before bbolt reads the file, Open vets it:
//
//   - a clean Close seals the file: it writes the file's size and XXH64 beside it
//     (<path>.sum), and the next Open compares them before anything else reads the
//     file, so any byte changed, lost or added since (a meta page, a branch page, a
//     value inside a row's JSON, a truncation) is found. Open removes the seal before
//     it writes to the file;
//   - a file without a seal (the last run did not close cleanly, or an older version
//     closed it) must open read-only, hold every page its meta page counts (not
//     truncated), have every value match its own checksum (sum.go), and pass
//     bbolt's consistency check.
//
// A damaged file is set aside (<path>.corrupt) and Open starts a fresh projection,
// which CatchUp and Run fold from sequence 1, when the log still holds every event
// of both streams. When it does not (retention has removed old requests and
// receipts) a rebuild would serve a shorter history, so Open refuses with a
// *DamagedError naming the file and `capdir replay`.

// sealPath is where a clean Close writes the file's size and checksum.
func sealPath(path string) string { return path + ".sum" }

// corruptPath is where a damaged file is set aside.
func corruptPath(path string) string { return path + ".corrupt" }

// vetTimeout bounds Open's question to the log about what it holds (Open takes no
// context).
const vetTimeout = 10 * time.Second

// vet makes cfg.Path safe to open: it returns nil when the file is absent, matches
// its seal, or (unsealed, or dirty: the last run did not close it) passes bbolt's
// checks; it sets a damaged file aside when the log can rebuild it; and it returns
// a *DamagedError when it cannot. The seal is removed before Open writes.
func vet(cfg Config, dirty bool) error {
	reason, err := damage(cfg.Path, dirty)
	if err != nil {
		return err
	}
	if reason != "" {
		if err := rebuildable(cfg, reason); err != nil {
			return err
		}
		cfg.Logger.Warn("projection damaged; setting it aside and rebuilding it from the log",
			"path", cfg.Path, "reason", reason, "set_aside", corruptPath(cfg.Path))
		if err := os.Rename(cfg.Path, corruptPath(cfg.Path)); err != nil {
			return fmt.Errorf("projector: set aside %s: %w", cfg.Path, err)
		}
	}
	if err := os.Remove(sealPath(cfg.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("projector: %w", err)
	}
	return nil
}

// damage says why the file at path must not be served ("" when it may be, or when
// it does not exist). err is a failure to look, not damage.
func damage(path string, dirty bool) (reason string, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("projector: %w", err)
	}
	if !dirty {
		want, err := os.ReadFile(sealPath(path))
		switch {
		case err == nil:
			want = bytes.TrimSpace(want)
			got, err := fileSeal(path, sealSum(want))
			if err != nil {
				return "", err
			}
			if !bytes.Equal(want, got) {
				return fmt.Sprintf("it does not match the size and checksum written in %s when it was last closed (%s now)",
					filepath.Base(sealPath(path)), got), nil
			}
			return "", nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("projector: %w", err)
		}
	}
	return boltDamage(path)
}

// A seal is "<size> <sum>:<hex>", the file's size in bytes and its checksum.
// Seals are written with XXH64 (sealXXH64), which finds damage as surely as a
// cryptographic hash (a seal guards against a file changed by accident, not by
// someone who could as well write the seal beside it) at about eight times
// SHA-256's speed; seals written with SHA-256 (sealSHA256, by earlier versions)
// are checked as they were written.
const (
	sealXXH64  = "xxh64"
	sealSHA256 = "sha256"
)

// sealSum is the checksum seal names: sealSHA256 when it names it, sealXXH64
// otherwise (a seal that names neither does not match the file's).
func sealSum(seal []byte) string {
	if _, rest, ok := bytes.Cut(seal, []byte(" ")); ok && bytes.HasPrefix(rest, []byte(sealSHA256+":")) {
		return sealSHA256
	}
	return sealXXH64
}

// fileSeal is the seal of the file at path with checksum sum (sealXXH64 or
// sealSHA256).
func fileSeal(path, sum string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("projector: %w", err)
	}
	defer f.Close()
	var h hash.Hash = xxhash.New()
	if sum == sealSHA256 {
		h = sha256.New()
	}
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("projector: read %s: %w", path, err)
	}
	return []byte(strconv.FormatInt(n, 10) + " " + sum + ":" + hex.EncodeToString(h.Sum(nil))), nil
}

// writeSeal writes the seal of the closed file at path beside it, atomically.
func writeSeal(path string) error {
	s, err := fileSeal(path, sealXXH64)
	if err != nil {
		return err
	}
	tmp := sealPath(path) + ".tmp"
	if err := writeSynced(tmp, append(s, '\n')); err != nil {
		return fmt.Errorf("projector: seal %s: %w", path, err)
	}
	if err := os.Rename(tmp, sealPath(path)); err != nil {
		return fmt.Errorf("projector: seal %s: %w", path, err)
	}
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// boltDamage opens the file read-only and checks it: its meta pages, its length
// against the pages they count (before any other page is read), every page a
// cursor reads (walk), and bbolt's consistency check.
func boltDamage(path string) (string, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, berrors.ErrTimeout) || errors.As(err, &pathErr):
		return "", fmt.Errorf("projector: open %s: %w", path, err)
	case err != nil:
		return "bbolt cannot open it: " + err.Error(), nil
	}
	defer db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("projector: %w", err)
	}
	var reason string
	err = db.View(func(tx *bolt.Tx) error {
		if need := tx.Size(); fi.Size() < need {
			reason = fmt.Sprintf("it is truncated: %d bytes, and its pages need %d", fi.Size(), need)
			return nil
		}
		if err := walk(tx); err != nil {
			reason = err.Error()
		} else if err := check(tx); err != nil {
			reason = "bbolt's consistency check fails: " + err.Error()
		}
		return nil
	})
	return reason, err
}

// walk reads every key of every bucket in tx, in order, as a cursor does: bbolt
// checks each page it reads (its id and type), and the keys must ascend; then
// every value must match its checksum (checkSums). bbolt
// panics on a damaged page, and reading past the end of the file faults; walk
// runs first, on this goroutine, and returns either as an error, where bbolt's
// own check and its open would panic on a goroutine of theirs and end the process.
func walk(tx *bolt.Tx) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bbolt cannot read it: %v", r)
		}
	}()
	err = tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		var prev []byte
		return b.ForEach(func(k, _ []byte) error {
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				return fmt.Errorf("bucket %s: its keys are out of order", name)
			}
			prev = k
			return nil
		})
	})
	if err != nil {
		return err
	}
	return checkSums(tx)
}

// rebuildable returns nil when the log holds every event of both streams, so that
// a projection folded from it again holds everything the damaged one did, and
// otherwise the *DamagedError that refuses the file.
func rebuildable(cfg Config, reason string) error {
	derr := &DamagedError{Path: cfg.Path, Reason: reason}
	if cfg.Log == nil {
		return derr
	}
	stream, first, err := missingFromLog(cfg)
	if err != nil {
		return fmt.Errorf("%w; and the log could not say whether it can rebuild it: %w", derr, err)
	}
	if stream != "" {
		derr.Stream, derr.FirstSeq = stream, first
		return derr
	}
	return nil
}

// missingFromLog names a stream whose first events the log no longer holds
// (retention removed them) and the first sequence it holds; "" when the log holds
// every event of both streams, or when cfg has no log.
func missingFromLog(cfg Config) (stream string, firstSeq uint64, err error) {
	if cfg.Log == nil {
		return "", 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), vetTimeout)
	defer cancel()
	for _, s := range wire.Streams {
		st, err := cfg.Log.State(ctx, s)
		if err != nil {
			return "", 0, err
		}
		if st.LastSeq > 0 && st.FirstSeq > 1 {
			return s, st.FirstSeq, nil
		}
	}
	return "", 0, nil
}
