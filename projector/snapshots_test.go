package projector_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/capdir/capdir/contract"
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
		checkPage(t, snap, modelAt(writes, seq))
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

// checkPage compares a filtered page of snap (which decodes only the rows it
// answers with) with the same page of the model's rows, row_num included.
func checkPage(t *testing.T, snap *projector.Snapshot, model map[string]contract.Row) {
	t.Helper()
	all := make([]contract.Row, 0, len(model))
	for _, r := range model {
		all = append(all, r)
	}
	contract.Number(all)
	var want []contract.Row
	for _, r := range all {
		if r.Category == "cat1" {
			want = append(want, r)
		}
	}
	total := len(want)
	want = want[min(1, len(want)):]
	want = want[:min(3, len(want))]
	got, gotTotal, err := snap.List(projector.Filter{Category: "cat1"}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if gotTotal != total || len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
		t.Fatalf("directory at %d: page %v of %d rows, want %v of %d", snap.Seq, got, gotTotal, want, total)
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

// A snapshot that passes its checksum but whose entries do not decode (cut short)
// is passed over as well.
func TestDirectoryAtUndecodableSnapshotFallsBackToTheLog(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 300, 20, 30)
	cfg := projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l}
	projector.SetSnapshotEvery(&cfg, 7, 30)
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	if n := projector.CutSnapshots(p); n == 0 {
		t.Fatal("no snapshot kept")
	}
	// Downwards, so that each rewind starts from a snapshot, not the last rewind.
	for i := len(writes) - 1; i >= len(writes)/2; i -= 7 {
		w := writes[i]
		snap, err := p.DirectoryAt(context.Background(), projector.Point{Seq: w.seq})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, w.seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %d: %d rows, want %d", w.seq, len(got), len(want))
		}
	}
}

// A projection written before snapshots were kept gets them built at Open from
// the log: it digests as a fresh replay does, before and after it folds more, and
// its rewinds start from them.
func TestOpenBuildsSnapshotsOfAnOlderProjection(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 600, 20, 31)
	dir := t.TempDir()
	openAt := func(name string) *projector.Projector {
		cfg := projector.Config{Path: filepath.Join(dir, name), Log: l}
		projector.SetSnapshotEvery(&cfg, 7, 30)
		p, err := projector.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	digest := func(p *projector.Projector) string {
		if err := runUntil(t, p, l); err != nil {
			t.Fatal(err)
		}
		d, err := p.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	old := openAt("old.db")
	digest(old)
	old.Close()
	if err := projector.ForgetSnapshots(filepath.Join(dir, "old.db")); err != nil {
		t.Fatal(err)
	}
	old = openAt("old.db")
	defer old.Close()
	fresh := openAt("fresh.db")
	defer fresh.Close()
	if a, b := digest(old), digest(fresh); a != b {
		t.Fatalf("the older projection digests %s, a fresh replay %s", a, b)
	}
	if n, _ := projector.SnapshotsSize(old); n < 80 {
		t.Fatalf("%d snapshots built, want one every 7 directory events", n)
	}
	for i := len(writes) - 1; i >= 0; i -= 10 {
		w := writes[i]
		snap, err := old.DirectoryAt(context.Background(), projector.Point{Seq: w.seq})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, w.seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %d: %d rows, want %d", w.seq, len(got), len(want))
		}
	}
	appendRandomWrites(t, l, 100, 20, 32)
	if a, b := digest(old), digest(fresh); a != b {
		t.Fatalf("after more writes the older projection digests %s, a fresh replay %s", a, b)
	}
}
