package projector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// busCollision is a log holding two bus clients' requests under one invocation
// id: fold version 1 kept the first and dropped the second, this fold keeps the
// second as bob's own invocation under its scoped id.
func busCollision(t *testing.T) *eventlog.Log {
	t.Helper()
	l := logtest.Open(t, "")
	for _, client := range []string{"alice", "bob"} {
		ev, err := l.NewEvent(wire.TypeInvocationRequested, client, wire.InvocationRequest{InvocationID: "inv_shared", Body: client})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(context.Background(), wire.BusRequestSubject(client, "GREET"), ev); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

var bobScoped = wire.ScopedInvocationID("bob", "inv_shared")

// foldAll opens the projection at path on l, folds all of l, and closes it.
func foldAll(t *testing.T, path string, l *eventlog.Log) {
	t.Helper()
	p, err := Open(Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// writeFoldV1 makes the projection at path what fold version 1 built of the log
// busCollision writes: no fold version, and no record of bob's scoped invocation.
// Its seal goes too: a version before the key wrote the file unsealed or sealed
// it as it was, and either way the file is sound.
func writeFoldV1(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketInvocations).Get([]byte(bobScoped)) == nil {
			return errors.New("this fold did not record bob's scoped invocation")
		}
		return errors.Join(tx.Bucket(bucketInvocations).Delete([]byte(bobScoped)), tx.Bucket(bucketMeta).Delete(foldVersionKey))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if err := os.Remove(sealPath(path)); err != nil {
		t.Fatal(err)
	}
}

// A projection fold version 1 built of a log with two bus clients' requests
// under one id is not served: Open sets it aside and the fresh projection folds
// to what a replay gives, bob's scoped invocation included.
func TestOpenRebuildsAProjectionAnOlderFoldBuilt(t *testing.T) {
	l := busCollision(t)
	path := filepath.Join(t.TempDir(), "p.db")
	foldAll(t, path, l)
	writeFoldV1(t, path)

	p, err := Open(Config{Path: path, Log: l})
	if err != nil {
		t.Fatalf("open a projection fold version 1 built: %v", err)
	}
	defer p.Close()
	if err := p.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.FirstRequest(bobScoped); err != nil {
		t.Fatalf("bob's scoped invocation after the open: %v; want it folded", err)
	}
	if _, err := os.Stat(setAsideFoldPath(path, 1)); err != nil {
		t.Fatalf("the older fold's projection is not set aside: %v", err)
	}
	replayed := filepath.Join(t.TempDir(), "replayed.db")
	if err := Rebuild(context.Background(), Config{Path: replayed, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	want, err := FileDigest(replayed)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Digest(); err != nil || got != want {
		t.Fatalf("digest after the open = %s, %v; want the replay's %s", got, err, want)
	}
}

// A projection fold version 1 built is served as that fold built it, with a
// warning naming `capdir replay`, when the log cannot rebuild it (no log given,
// or retention removed its first events): folding it again would lose what the
// log no longer holds. It is not set aside, not marked as this fold's (so it
// warns again when opened again), and what it holds is what version 1 folded.
func TestOpenServesAnOlderFoldsProjectionTheLogCannotRebuild(t *testing.T) {
	cases := []struct {
		name    string
		log     bool
		trim    bool
		message string
	}{
		{name: "no log", message: "no log was given to rebuild it from"},
		{name: "trimmed log", log: true, trim: true, message: "stream " + wire.DataStream + " holds events from sequence 2 on"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := busCollision(t)
			path := filepath.Join(t.TempDir(), "p.db")
			foldAll(t, path, l)
			writeFoldV1(t, path)
			if tc.trim {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				s, err := l.JetStream().Stream(ctx, wire.DataStream)
				if err == nil {
					err = s.Purge(ctx, jetstream.WithPurgeSequence(2))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			want := digestOfFile(t, path)
			for round := 1; round <= 2; round++ {
				var logged bytes.Buffer
				cfg := Config{Path: path, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
				if tc.log {
					cfg.Log = l
				}
				p, err := Open(cfg)
				if err != nil {
					t.Fatalf("round %d: open: %v; want the projection served as it is", round, err)
				}
				got, err := p.Digest()
				p.Close()
				if err != nil || got != want {
					t.Fatalf("round %d: digest %s, %v; want the old fold's %s", round, got, err, want)
				}
				for _, s := range []string{"older fold", "fold_version=1", tc.message, "capdir replay"} {
					if !strings.Contains(logged.String(), s) {
						t.Errorf("round %d: log %q; want it to say %q", round, logged.String(), s)
					}
				}
				if _, err := os.Stat(setAsideFoldPath(path, 1)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("round %d: the file was set aside: %v", round, err)
				}
			}
		})
	}
}

// digestOfFile is the digest of the projection file at path, read as it is.
func digestOfFile(t *testing.T, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := digestDB(db)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A projection without the key that folded no event of a stream a later fold
// changed is what this fold builds: Open marks it and serves it as it is.
func TestOpenMarksAnOlderProjectionThisFoldBuildsTheSame(t *testing.T) {
	l := logtest.Open(t, "")
	ev, err := l.NewEvent(wire.TypeTokenRevoked, "test", wire.TokenRevoked{JTI: "tok_1", Exp: 4102444800})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), wire.TokenSubject("tok_1"), ev); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	foldAll(t, path, l)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(foldVersionKey) })
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	os.Remove(sealPath(path))
	p, err := Open(Config{Path: path})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer p.Close()
	if p.Applied(wire.ControlStream) == 0 {
		t.Fatal("the projection was not served as it was")
	}
	err = p.db.View(func(tx *bolt.Tx) error {
		v, err := metaValue(tx, foldVersionKey)
		if err == nil && readU64(v) != foldVersion {
			err = errors.New("not marked")
		}
		return err
	})
	if err != nil {
		t.Fatalf("fold version after the open: %v; want %d", err, foldVersion)
	}
}
