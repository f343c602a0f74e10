package projector_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// folded builds a projection of a small log at path, closes it, and returns its
// checkpoints.
func folded(t *testing.T, l *eventlog.Log, path string) map[string]uint64 {
	t.Helper()
	appendMix(t, l, 5)
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	ckpt := map[string]uint64{}
	for _, s := range wire.Streams {
		ckpt[s] = p.Applied(s)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return ckpt
}

// asLogBehind asserts that err is a LogBehindError about stream, saying what to do.
func asLogBehind(t *testing.T, err error, stream string) *projector.LogBehindError {
	t.Helper()
	var lb *projector.LogBehindError
	if !errors.As(err, &lb) || !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("err = %v; want a LogBehindError", err)
	}
	if lb.Stream != stream {
		t.Fatalf("mismatch on %s, want %s: %v", lb.Stream, stream, err)
	}
	for _, want := range []string{stream, "restore", "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}
	return lb
}

// A stream deleted and created again while the projection was stopped is another
// log, even once it holds more events than the checkpoint: the projection refuses to
// fold it (it would skip the new stream's first events), and a rebuild recovers.
func TestRecreatedStreamIsRefusedOnStartAndRebuildRecovers(t *testing.T) {
	l := logtest.Open(t, "")
	path := filepath.Join(t.TempDir(), "p.db")
	ckpt := folded(t, l, path)

	logtest.Recreate(t, l, wire.ControlStream)
	appendMix(t, l, 10) // the new control stream ends past the old checkpoint
	last := lastSeqs(t, l)[wire.ControlStream]
	if last <= ckpt[wire.ControlStream] {
		t.Fatalf("setup: the new stream ends at %d, not past the checkpoint %d", last, ckpt[wire.ControlStream])
	}
	p := open(t, path, l)
	lb := asLogBehind(t, p.CatchUp(context.Background(), nil), wire.ControlStream)
	if lb.Checkpoint != ckpt[wire.ControlStream] || lb.LastSeq != last || lb.Folded.IsZero() || lb.Created.Equal(lb.Folded) {
		t.Fatalf("error = %+v; want checkpoint %d, last %d and two creation times", lb, ckpt[wire.ControlStream], last)
	}
	if !strings.Contains(lb.Error(), "created again") {
		t.Fatalf("message %q does not say the stream was created again", lb)
	}
	asLogBehind(t, p.Run(context.Background()), wire.ControlStream)
	if got := p.Applied(wire.ControlStream); got != ckpt[wire.ControlStream] {
		t.Fatalf("applied %d after the refusal, want the old checkpoint %d: nothing folded", got, ckpt[wire.ControlStream])
	}
	p.Close()

	if err := projector.Rebuild(context.Background(), projector.Config{Path: path, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	p2 := open(t, path, l)
	if err := runUntil(t, p2, l); err != nil {
		t.Fatalf("after the rebuild: %v", err)
	}
	assertReplayDigest(t, l, p2)
}

// A stream that ends before the checkpoint (here the data stream, deleted and
// created again empty) is refused, naming both sequences.
func TestCheckpointBeyondTheLogIsRefused(t *testing.T) {
	l := logtest.Open(t, "")
	path := filepath.Join(t.TempDir(), "p.db")
	ckpt := folded(t, l, path)
	logtest.Recreate(t, l, wire.DataStream)
	appendEv(t, l, wire.ReceiptSubject("K"), t0, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_new", Key: "K"}})

	p := open(t, path, l)
	err := p.CatchUp(context.Background(), nil)
	lb := asLogBehind(t, err, wire.DataStream)
	if lb.Checkpoint != ckpt[wire.DataStream] || lb.LastSeq != 1 {
		t.Fatalf("error = %+v; want checkpoint %d, last 1", lb, ckpt[wire.DataStream])
	}
	want := "ends at sequence 1, but the projection has applied it up to sequence " + strconv.FormatUint(ckpt[wire.DataStream], 10)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q does not say %q", err, want)
	}
	if _, _, err := p.Receipt("inv_new"); !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("the new stream's event was folded: %v", err)
	}
}

// While Run follows the log, a stream deleted and created again under it stops it:
// Run returns the mismatch, and a wait for an event of the new stream fails instead
// of reporting a sequence the projection applied from the old one.
func TestRunStopsWhenAStreamIsRecreatedUnderIt(t *testing.T) {
	l := logtest.Open(t, "")
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- p.Run(ctx) }()
	for _, k := range []string{"A", "B", "C"} {
		writeRow(t, l, p, contract.ActionCreate, k, "echo")
	}

	logtest.Recreate(t, l, wire.ControlStream)
	select {
	case err := <-done:
		asLogBehind(t, err, wire.ControlStream)
	case <-time.After(5 * time.Second):
		t.Fatal("Run went on following a stream deleted and created again")
	}
	seq := appendEv(t, l, wire.DirectorySubject("D"), t0, wire.TypeDirectoryMutate, contract.DirectoryMutation{Action: contract.ActionDelete, Key: "D"})
	if seq > p.Applied(wire.ControlStream) {
		t.Fatalf("setup: the new stream's sequence %d is past the checkpoint", seq)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
	defer wcancel()
	asLogBehind(t, p.WaitFor(wctx, wire.ControlStream, seq), wire.ControlStream)
	asLogBehind(t, p.Settle(wctx, wire.ControlStream), wire.ControlStream)
}

// Retention removing every data event, while the projector runs and across a
// restart of the log and the projector, is not a mismatch.
func TestRetentionDoesNotTripTheLogCheck(t *testing.T) {
	dir := t.TempDir()
	// Retention must leave the projector time to read what is appended (the
	// restart below starts it after appendMix): the server drops a message as
	// soon as 100 ms after it was stored, which a loaded machine can miss.
	logCfg := eventlog.Config{DataDir: dir, DataMaxAge: time.Second, DuplicateWindow: time.Second}
	l, err := eventlog.Open(context.Background(), logCfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	cfg := projector.Config{Path: path, Log: l, Settings: projector.Settings{LogCheck: 10 * time.Millisecond}}
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	appendMix(t, l, 3)
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	for s, seq := range lastSeqs(t, l) {
		if err := p.WaitFor(wctx, s, seq); err != nil {
			t.Fatal(err)
		}
	}
	logtest.AwaitTrimmed(t, l, wire.DataStream)
	if err := p.Settle(ctx, wire.DataStream); err != nil {
		t.Fatalf("settle after retention: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after retention: %v", err)
	}
	p.Close()
	l.Close()

	// A normal restart of both.
	if l, err = eventlog.Open(context.Background(), logCfg); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p = open(t, path, l)
	if err := p.CatchUp(context.Background(), nil); err != nil {
		t.Fatalf("catch-up after a restart: %v", err)
	}
	appendMix(t, l, 1)
	if err := runUntil(t, p, l); err != nil {
		t.Fatalf("run after a restart: %v", err)
	}
}
