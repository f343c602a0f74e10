package projector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A projection a later fold built (capdir downgraded) is refused, whether or
// not the log could rebuild it, with an error naming both fold versions and
// `capdir replay`; the file is left as it was (not set aside, not marked, not
// written). `capdir replay`'s rebuild then gives a projection this fold opens.
func TestOpenRefusesAProjectionALaterFoldBuilt(t *testing.T) {
	for _, withLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("log %t", withLog), func(t *testing.T) {
			l := busCollision(t)
			path := filepath.Join(t.TempDir(), "p.db")
			foldAll(t, path, l)
			later := foldVersion + 1
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error { return put(tx, bucketMeta, foldVersionKey, u64(later)) })
			if cerr := db.Close(); err != nil || cerr != nil {
				t.Fatal(err, cerr)
			}
			os.Remove(sealPath(path))
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var logged bytes.Buffer
			cfg := Config{Path: path, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
			if withLog {
				cfg.Log = l
			}
			p, err := Open(cfg)
			if err == nil {
				p.Close()
				t.Fatalf("opened a projection fold version %d built; log: %s", later, logged.String())
			}
			var newer *NewerFoldError
			if !errors.As(err, &newer) || !errors.Is(err, ErrNewerFold) || newer.Have != later || newer.Want != foldVersion {
				t.Fatalf("open: %v; want a *NewerFoldError for version %d", err, later)
			}
			for _, s := range []string{path, fmt.Sprintf("fold version %d", later), fmt.Sprintf("folds version %d", foldVersion), "`capdir replay`"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("open: %q; want it to name %q", err, s)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the refused file changed (%v)", err)
			}
			if _, err := os.Stat(setAsideFoldPath(path, later)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused file was set aside: %v", err)
			}
			if _, err := os.Stat(dirtyMarker(path)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused file was marked open: %v", err)
			}
			if !withLog {
				return
			}
			if err := Rebuild(context.Background(), Config{Path: path, Log: l}, nil); err != nil {
				t.Fatalf("replay: %v", err)
			}
			p, err = Open(Config{Path: path, Log: l})
			if err != nil {
				t.Fatalf("open after the replay: %v", err)
			}
			defer p.Close()
			if _, err := p.FirstRequest(bobScoped); err != nil {
				t.Fatalf("bob's scoped invocation after the replay: %v", err)
			}
		})
	}
}
