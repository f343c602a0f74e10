package projector_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/bench"
	"github.com/capdir/capdir/projector"
	bolt "go.etcd.io/bbolt"
)

// A rebuild, which prepares each batch on its own goroutine while the one before
// it folds, reads the second stream while the first one's last batches fold, and
// holds the receipts' by-key index back to put it in its order, stores byte for
// byte what the live fold, which does none of these, stores: every bucket's keys and values, over a log of bench.GenerateLog's mix
// (creates, patches, deletes, requests, receipts of fn and http rows, counted
// upstream failures) with a receipt repeated, a request repeated by a bus client
// (its id scoped to the client), and a receipt and a request whose data does not
// decode.
func TestRebuildStoresWhatTheLiveFoldStores(t *testing.T) {
	l := logtest.Open(t, "")
	if _, err := bench.GenerateLog(context.Background(), l, 3000); err != nil {
		t.Fatal(err)
	}
	live := open(t, filepath.Join(t.TempDir(), "live.db"), l)
	if err := runUntil(t, live, l); err != nil {
		t.Fatal(err)
	}
	key, inv := "DUP_KEY", "inv_dup_00001"
	appendEv(t, l, wire.RequestSubject(key), t0, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: key, Body: "x"})
	appendEv(t, l, wire.ReceiptSubject(key), t0, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: true, Ran: true, Status: "PROVEN_MATERIAL_RESULT", FinishedAt: t0}, BreakerKind: "not_counted"})
	appendEv(t, l, wire.ReceiptSubject(key), t0, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: false, Status: "RAN_WITH_ERROR", FinishedAt: t0}, BreakerKind: "not_counted"})
	appendEv(t, l, wire.BusRequestSubject("app1", key), t0, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: key, Body: "again"})
	appendEv(t, l, wire.ReceiptSubject(key), t0, wire.TypeReceipt, map[string]any{"invocation_id": 7})
	appendEv(t, l, wire.RequestSubject(key), t0, wire.TypeInvocationRequested, map[string]any{"key": []int{1}})
	bench.GenerateLog(context.Background(), l, 200)
	if err := runUntil(t, live, l); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	want := dumpBuckets(t, live.Path())
	if len(want) == 0 {
		t.Fatal("the live projection holds nothing")
	}
	for _, tc := range []struct {
		name  string
		batch int
		held  int // how many by-key entries the rebuild holds back at most (0: the default)
	}{
		// Batches of 64: many batches, so many pass through the stages together.
		{"batches of 64", 64, 0},
		// The by-key index put whenever 50 entries are held: many times, each
		// time among the entries put before.
		{"by-key index put every 50 receipts", 64, 50},
		{"default batches", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := projector.Config{Path: filepath.Join(t.TempDir(), "rebuilt.db"), Log: l, Settings: projector.Settings{BatchSize: tc.batch}}
			projector.SetByKeyLaterLimit(&cfg, tc.held)
			// The batches commit stream after stream, as the live fold of a
			// stream after the other would commit them.
			var order []string
			progress := func(stream string, seq, last uint64) {
				if len(order) == 0 || order[len(order)-1] != stream {
					order = append(order, stream)
				}
			}
			if err := projector.Rebuild(context.Background(), cfg, progress); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(order, wire.Streams) {
				t.Errorf("the rebuild committed the streams' batches in the order %v, want %v", order, wire.Streams)
			}
			compareBuckets(t, want, dumpBuckets(t, cfg.Path))
		})
	}
}

// compareBuckets fails t where got, a rebuilt file's buckets, differs from
// want, the live fold's.
func compareBuckets(t *testing.T, want, got map[string]map[string]string) {
	t.Helper()
	diffs := 0
	differ := func(format string, args ...any) {
		if diffs++; diffs <= 5 {
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if diffs > 5 {
			t.Errorf("and %d more differences", diffs-5)
		}
	}()
	for name, kv := range want {
		if len(got[name]) != len(kv) {
			differ("bucket %s: %d values rebuilt, %d live", name, len(got[name]), len(kv))
		}
		for k, v := range kv {
			if g, ok := got[name][k]; !ok {
				differ("bucket %s: key %q live, not rebuilt", name, k)
			} else if !bytes.Equal([]byte(g), []byte(v)) {
				differ("bucket %s, key %q: rebuilt %x, live %x", name, k, g, v)
			}
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			differ("bucket %s rebuilt, not live", name)
		}
	}
}

// dumpBuckets is every bucket of the bbolt file at path, nested ones by their
// path, as key → value.
func dumpBuckets(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]map[string]string{}
	var walk func(name string, b *bolt.Bucket) error
	walk = func(name string, b *bolt.Bucket) error {
		kv := map[string]string{}
		out[name] = kv
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(name+"/"+string(k), b.Bucket(k))
			}
			kv[string(k)] = string(v)
			return nil
		})
	}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name), b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A rebuild stopped before it reaches the end of the log (capdir replay
// interrupted) says so, leaves the projection it was to replace as it was and
// removes its partial file; before, the reader's silent return on a stopped
// context made it swap the partial file in and report success.
func TestRebuildStoppedLeavesTheProjectionAsItWas(t *testing.T) {
	l := logtest.Open(t, "")
	if _, err := bench.GenerateLog(context.Background(), l, 3000); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "projection.db")
	if err := projector.Rebuild(context.Background(), projector.Config{Path: path, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bench.GenerateLog(context.Background(), l, 500); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	err = projector.Rebuild(ctx, projector.Config{Path: path, Log: l, Settings: projector.Settings{BatchSize: 64}}, func(string, uint64, uint64) {
		if batches++; batches == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "catch-up stopped before the end of the log") {
		t.Fatalf("a rebuild stopped after %d batches returned %v, want the stop named", batches, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("a stopped rebuild changed the projection it was to replace")
	}
	for _, left := range []string{".rebuild", ".rebuild.sum", ".rebuild.open"} {
		if _, err := os.Stat(path + left); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a stopped rebuild left %s behind (%v)", filepath.Base(path+left), err)
		}
	}
	// The next rebuild, not stopped, folds everything.
	if err := projector.Rebuild(context.Background(), projector.Config{Path: path, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	// A catch-up (a start's) stopped on its way says so too.
	if _, err := bench.GenerateLog(context.Background(), l, 2000); err != nil {
		t.Fatal(err)
	}
	cfg := projector.Config{Path: path, Log: l, Settings: projector.Settings{BatchSize: 64}}
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	err = p.CatchUp(ctx, func(string, uint64, uint64) { cancel() })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "catch-up stopped before the end of the log") {
		t.Fatalf("a catch-up stopped after its first batch returned %v", err)
	}
}
