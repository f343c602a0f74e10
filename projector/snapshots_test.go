package projector_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/projector"
)

// The model test across kept snapshots: a rewind to every tenth sequence loads
// the nearest snapshot (full or delta chain) and folds on from it, and gives the
// fold of the writes up to it; by time as well.
func TestDirectoryAtFromSnapshotsMatchesModel(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 2000, 30, 26)
	path := filepath.Join(t.TempDir(), "p.db")
	cfg := projector.Config{Path: path, Log: l}
	projector.SetSnapshotEvery(&cfg, 7, 30)
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	if n, _ := projector.SnapshotsSize(p); n < 200 {
		t.Fatalf("%d snapshots kept, want one every 7 directory events", n)
	}
	ctx := context.Background()
	last := writes[len(writes)-1].seq
	// Downwards, so that no rewind folds on from the one before it.
	for seq := last - last%10; seq >= 10; seq -= 10 {
		snap, err := p.DirectoryAt(ctx, projector.Point{Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %d: %d rows, want %d (%v against %v)", seq, len(got), len(want), got, want)
		}
	}
	for _, w := range writes[len(writes)/3:][:50] {
		snap, err := p.DirectoryAt(ctx, projector.Point{Time: w.at})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, w.seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %s: %d rows, want %d", w.at, len(got), len(want))
		}
	}
}

// A replay keeps the same snapshots as the live fold (the digest covers them).
func TestSnapshotsReplayAlike(t *testing.T) {
	l := logtest.Open(t, "")
	appendRandomWrites(t, l, 500, 20, 27)
	digest := func(name string) string {
		cfg := projector.Config{Path: filepath.Join(t.TempDir(), name), Log: l}
		projector.SetSnapshotEvery(&cfg, 7, 30)
		if name == "batched.db" {
			projector.SetLingerFrom(&cfg, 1)
		}
		p, err := projector.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := runUntil(t, p, l); err != nil {
			t.Fatal(err)
		}
		d, err := p.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := digest("one.db"), digest("batched.db"); a != b {
		t.Fatalf("digests differ: %s and %s", a, b)
	}
}

// A damaged snapshot is passed over: the rewind folds the log from its start.
func TestDirectoryAtDamagedSnapshotFallsBackToTheLog(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 300, 20, 28)
	path := filepath.Join(t.TempDir(), "p.db")
	cfg := projector.Config{Path: path, Log: l}
	projector.SetSnapshotEvery(&cfg, 7, 30)
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Flip a byte of every snapshot, under its checksum, as a bad disk would.
	if n := projector.DamageSnapshots(p); n == 0 {
		t.Fatal("no snapshot kept")
	}
	for _, w := range writes[len(writes)/2:][:20] {
		snap, err := p.DirectoryAt(context.Background(), projector.Point{Seq: w.seq})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, w.seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %d: %d rows, want %d", w.seq, len(got), len(want))
		}
	}
}
