package projector_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

var t0 = time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)

// appendMix writes n rows (with some patches and deletes) and a request and
// receipt per row, the shape of a real directory's log.
func appendMix(t testing.TB, l *eventlog.Log, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("ROW_%05d", i)
		at := t0.Add(time.Duration(i) * time.Millisecond)
		row := contract.Row{Key: key, Type: "fn", Target: "echo", Content: "# WHAT: row " + key, Enabled: 1, PlannerVisible: 1, PlannerRank: 100, UpdatedAt: contract.FormatTime(at), CreatedAt: contract.FormatTime(at)}
		if i%7 == 0 {
			s := int64(n - i)
			row.Seq = &s
		}
		appendEv(t, l, wire.DirectorySubject(key), at, wire.TypeDirectoryMutate, eventlog.DirectoryMutation{Action: eventlog.ActionCreate, Key: key, Row: &row})
		if i%5 == 0 {
			row.Category = "patched"
			appendEv(t, l, wire.DirectorySubject(key), at, wire.TypeDirectoryMutate, eventlog.DirectoryMutation{Action: eventlog.ActionPatch, Key: key, Row: &row})
		}
		if i%11 == 0 {
			appendEv(t, l, wire.DirectorySubject(key), at, wire.TypeDirectoryMutate, eventlog.DirectoryMutation{Action: eventlog.ActionDelete, Key: key})
		}
		inv := fmt.Sprintf("inv_%05d", i)
		appendEv(t, l, wire.RequestSubject(key), at, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: key, Body: "x"})
		appendEv(t, l, wire.ReceiptSubject(key), at, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: true, Ran: true, Status: "PROVEN_MATERIAL_RESULT", FinishedAt: at}, BreakerKind: "not_counted"})
	}
	_ = ctx
}

func appendEv(t testing.TB, l *eventlog.Log, subj string, at time.Time, typ string, data any) uint64 {
	t.Helper()
	ev, err := wire.NewEvent(at, typ, "test", data)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := l.Append(context.Background(), subj, ev)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func lastSeqs(t testing.TB, l *eventlog.Log) map[string]uint64 {
	m := map[string]uint64{}
	for _, s := range wire.Streams {
		v, err := l.LastSeq(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		m[s] = v
	}
	return m
}

// runUntil runs p until it has applied everything in the log now, then stops it.
func runUntil(t testing.TB, p *projector.Projector, l *eventlog.Log) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	for s, seq := range lastSeqs(t, l) {
		if err := p.WaitFor(wctx, s, seq); err != nil {
			cancel()
			if rerr := <-done; rerr != nil {
				return rerr
			}
			return err
		}
	}
	cancel()
	return <-done
}

func open(t testing.TB, path string, l *eventlog.Log) *projector.Projector {
	t.Helper()
	p, err := projector.Open(projector.Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestFoldAndQueries(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 30)
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	// 30 rows, every 11th deleted: 0, 11, 22.
	if got := p.Count(); got != 27 {
		t.Fatalf("count = %d, want 27", got)
	}
	if _, seq, err := p.Row("ROW_00011"); !errors.Is(err, projector.ErrNotFound) || seq == 0 {
		t.Fatalf("deleted row: err=%v seq=%d; want ErrNotFound with the delete's seq", err, seq)
	}
	r, _, err := p.Row("ROW_00005")
	if err != nil || r.Category != "patched" {
		t.Fatalf("patched row = %+v, %v", r, err)
	}
	// Rows with seq come first: ROW_00028 has seq 2, the smallest live seq.
	first, _, _ := p.Row("ROW_00028")
	if first.RowNum != 1 {
		t.Fatalf("ROW_00028 row_num = %d, want 1", first.RowNum)
	}
	rows, total, err := p.List(projector.Filter{Category: "patched"}, 0, 100)
	// Patched: 0,5,10,15,20,25; ROW_00000 was then deleted.
	if err != nil || total != 5 || len(rows) != 5 {
		t.Fatalf("list patched: total=%d len=%d err=%v", total, len(rows), err)
	}
	rc, _, err := p.Receipt("inv_00003")
	if err != nil || rc.Key != "ROW_00003" {
		t.Fatalf("receipt = %+v, %v", rc, err)
	}
	if _, _, err := p.Receipt("inv_nope"); !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("missing receipt err = %v", err)
	}
	byKey, err := p.ReceiptsByKey("ROW_00011", 10)
	if err != nil || len(byKey) != 1 {
		t.Fatalf("receipts of a deleted row: %d, %v (a receipt outlives its row)", len(byKey), err)
	}
}

func TestResumeFromCheckpoint(t *testing.T) {
	l := logtest.Open(t, "")
	path := filepath.Join(t.TempDir(), "p.db")
	appendMix(t, l, 20)
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	before := map[string]uint64{}
	for _, s := range wire.Streams {
		before[s] = p.Applied(s)
	}
	p.Close()

	appendMix(t, l, 25) // rewrites ROW_00000..19 and adds 5 more
	var firstSeen = map[string]uint64{}
	cfg := projector.Config{Path: path, Log: l}
	projector.SetBeforeCommit(&cfg, func(stream string, batch []eventlog.Stored) error {
		if _, ok := firstSeen[stream]; !ok {
			firstSeen[stream] = batch[0].Seq
		}
		return nil
	})
	p2, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	for _, s := range wire.Streams {
		if p2.Applied(s) != before[s] {
			t.Fatalf("%s checkpoint after reopen = %d, want %d", s, p2.Applied(s), before[s])
		}
	}
	if err := runUntil(t, p2, l); err != nil {
		t.Fatal(err)
	}
	for _, s := range wire.Streams {
		if firstSeen[s] != before[s]+1 {
			t.Fatalf("%s resumed at %d, want %d (the checkpoint + 1)", s, firstSeen[s], before[s]+1)
		}
	}
	assertReplayDigest(t, l, p2)
}

// assertReplayDigest rebuilds the log into a fresh file and compares digests.
func assertReplayDigest(t testing.TB, l *eventlog.Log, live *projector.Projector) {
	t.Helper()
	want, err := live.Digest()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replayed.db")
	if err := projector.Rebuild(context.Background(), projector.Config{Path: path, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := projector.FileDigest(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("replayed digest %s != live digest %s", got, want)
	}
}

func TestKilledBeforeCommitThenRestart(t *testing.T) {
	l := logtest.Open(t, "")
	path := filepath.Join(t.TempDir(), "p.db")
	appendMix(t, l, 40)

	// First run: the third batch of each stream is applied inside its transaction,
	// then the process "dies" before the commit.
	cfg := projector.Config{Path: path, Log: l, Settings: projector.Settings{BatchSize: 8}}
	batches := map[string]int{}
	var committedEnd uint64
	projector.SetBeforeCommit(&cfg, func(stream string, batch []eventlog.Stored) error {
		if stream != wire.DataStream {
			return nil
		}
		batches[stream]++
		if batches[stream] == 3 {
			return projector.ErrKilled
		}
		committedEnd = batch[len(batch)-1].Seq
		return nil
	})
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(context.Background())
	if !errors.Is(err, projector.ErrKilled) {
		t.Fatalf("run err = %v, want the kill", err)
	}
	if got := p.Applied(wire.DataStream); got != committedEnd {
		t.Fatalf("data checkpoint after the kill = %d, want %d (the end of the last committed batch)", got, committedEnd)
	}
	p.Close()
	if d, err := projector.FileDigest(path); err != nil {
		t.Fatal(err)
	} else {
		_ = d
	}
	// The abandoned batch left nothing behind: the file's checkpoint is that batch's start - 1.
	p, err = projector.Open(projector.Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Applied(wire.DataStream); got != committedEnd {
		t.Fatalf("data checkpoint on disk = %d, want %d", got, committedEnd)
	}
	p.Close()

	// Restart: resume and catch up; the result equals a clean replay.
	p2 := open(t, path, l)
	if err := runUntil(t, p2, l); err != nil {
		t.Fatal(err)
	}
	assertReplayDigest(t, l, p2)
}

func TestApplyingTwiceIsHarmless(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 10)
	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	d1, _ := p.Digest()
	// Fold the whole log again over the same file: every event is at or below the
	// checkpoint, so nothing changes.
	if err := p.CatchUpFrom(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	d2, _ := p.Digest()
	if d1 != d2 {
		t.Fatalf("digest changed after re-applying the log: %s -> %s", d1, d2)
	}
}

func TestWaitForHonoursContext(t *testing.T) {
	l := logtest.Open(t, "")
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.WaitFor(ctx, wire.ControlStream, 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

// A reader waiting for the data stream does not wait out the linger: WaitFor cuts
// the lingering batch short.
func TestWaitForCutsTheLingerShort(t *testing.T) {
	l := logtest.Open(t, "")
	cfg := projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Settings: projector.Settings{Linger: time.Second}}
	projector.SetLingerFrom(&cfg, 1) // a lone event lingers too
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ev, err := l.NewEvent(wire.TypeReceipt, "test", wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_hurry", Key: "K"}})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := l.Append(ctx, wire.ReceiptSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	// Half the linger: only a hurried commit makes it.
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer wcancel()
	if err := p.WaitFor(wctx, wire.DataStream, seq); err != nil {
		t.Fatalf("WaitFor waited out the linger: %v", err)
	}
	if _, _, err := p.Receipt("inv_hurry"); err != nil {
		t.Fatal(err)
	}
	// Settle asks the log for its end and waits for it the same way.
	seq2, err := l.Append(ctx, wire.ReceiptSubject("K"), mustReceipt(t, l, "inv_hurry2"))
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer scancel()
	if err := p.Settle(sctx, wire.DataStream); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if got := p.Applied(wire.DataStream); got < seq2 {
		t.Fatalf("applied %d after Settle, want %d", got, seq2)
	}
}

func mustReceipt(t *testing.T, l *eventlog.Log, inv string) wire.Event {
	t.Helper()
	ev, err := l.NewEvent(wire.TypeReceipt, "test", wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// A bus client may publish a request without invocation id or key: the projection
// records it as pending under the id the dispatcher derives from its event id.
func TestRequestWithoutIDsIsPendingUnderItsDerivedID(t *testing.T) {
	l := logtest.Open(t, "")
	p := running(t, l)
	ev, err := wire.NewEvent(t0, wire.TypeInvocationRequested, "nats:client", wire.InvocationRequest{Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := l.Append(context.Background(), wire.RequestSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, wire.DataStream, seq); err != nil {
		t.Fatal(err)
	}
	if _, pending, err := p.Receipt(wire.RequestInvocationID(ev.ID)); !pending || !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("pending = %v, err = %v; want a pending invocation", pending, err)
	}
}

// SettleKey looks up one key's subject in the log. A key that would make a
// subject pattern (">", "ROW_00001.>", "*") names no row: it is answered 0 at once,
// never with the last mutation of whatever key the pattern matches.
func TestSettleKeyOfAPatternKey(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 3)
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	if err := p.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range []string{">", "ROW_00001.>", "*", "ROW_*", "ROW_00001 "} {
		if seq, err := p.SettleKey(ctx, key); seq != 0 || err != nil {
			t.Errorf("SettleKey(%q) = %d, %v; want 0, nil", key, seq, err)
		}
	}
	want, err := l.LastSubjectSeq(ctx, wire.ControlStream, wire.DirectorySubject("ROW_00001"))
	if err != nil || want == 0 {
		t.Fatalf("last mutation of ROW_00001: %d, %v", want, err)
	}
	if seq, err := p.SettleKey(ctx, "ROW_00001"); seq != want || err != nil {
		t.Errorf("SettleKey(ROW_00001) = %d, %v; want %d", seq, err, want)
	}
}
