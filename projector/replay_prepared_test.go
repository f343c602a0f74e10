package projector_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/bench"
	"github.com/capdir/capdir/projector"
	bolt "go.etcd.io/bbolt"
)

// A rebuild, which prepares each batch on its own goroutine while the one before
// it folds, stores byte for byte what the live fold, which prepares nothing,
// stores: every bucket's keys and values, over a log of bench.GenerateLog's mix
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
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.db")
	// Batches of 64: many batches, so many pass through the stages together.
	if err := projector.Rebuild(context.Background(), projector.Config{Path: rebuilt, Log: l, Settings: projector.Settings{BatchSize: 64}}, nil); err != nil {
		t.Fatal(err)
	}
	want, got := dumpBuckets(t, live.Path()), dumpBuckets(t, rebuilt)
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
	if len(want) == 0 {
		t.Fatal("the live projection holds nothing")
	}
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
