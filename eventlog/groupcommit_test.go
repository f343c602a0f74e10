package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// openGrouped opens an embedded log in dir with group commit as mode says.
func openGrouped(t *testing.T, dir, mode string, existing bool) *eventlog.Log {
	t.Helper()
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: dir, GroupCommit: mode, Existing: existing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// groupAppendEvents appends evs (requests and receipts of the data stream) while the
// log's group commit is held, so that they go out together, and returns their
// appends.
func groupAppendEvents(t *testing.T, l *eventlog.Log, evs []wire.Event) []*eventlog.Pending {
	t.Helper()
	release := l.HoldGroup()
	ps := make([]*eventlog.Pending, len(evs))
	for i, ev := range evs {
		subject := wire.RequestSubject(fmt.Sprintf("K%d", i%3))
		if i%2 == 1 {
			subject = wire.ReceiptSubject(fmt.Sprintf("K%d", i%3))
		}
		p, err := l.AppendAsync(subject, ev)
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	release()
	return ps
}

// stored is p's acknowledgement; t fails if p fails.
func stored(t *testing.T, p *eventlog.Pending) *eventlog.Ack {
	t.Helper()
	select {
	case ack := <-p.Stored():
		return ack
	case <-p.Failed():
		t.Fatalf("append failed: %v", p.Err())
		return nil
	}
}

func events(t *testing.T, l *eventlog.Log, n int) []wire.Event {
	t.Helper()
	evs := make([]wire.Event, n)
	for i := range evs {
		evs[i] = mustEvent(t, l, wire.TypeInvocationRequested, map[string]int{"n": i})
	}
	return evs
}

// holdsAt fails t unless the data stream holds ev at seq.
func holdsAt(t *testing.T, l *eventlog.Log, ev wire.Event, seq uint64) {
	t.Helper()
	got, err := l.ReadSeq(context.Background(), wire.DataStream, seq)
	if err != nil {
		t.Fatalf("read %d: %v", seq, err)
	}
	if got.ID != ev.ID {
		t.Fatalf("sequence %d holds %s, want %s", seq, got.ID, ev.ID)
	}
}

// Appends sent together as one batch are each answered with their own
// sequence, in the order they were made, and each is stored there.
func TestGroupCommitAnswersEachAppend(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	evs := events(t, l, 40)
	ps := groupAppendEvents(t, l, evs)
	var prev uint64
	for i, p := range ps {
		ack := stored(t, p)
		if ack.Stream != wire.DataStream || ack.Duplicate || (prev != 0 && ack.Sequence != prev+1) {
			t.Fatalf("append %d: %+v after sequence %d", i, ack, prev)
		}
		prev = ack.Sequence
		holdsAt(t, l, evs[i], ack.Sequence)
	}
	if batches, refused := l.GroupCommits(); batches != 1 || refused != 0 {
		t.Fatalf("%d batches sent, %d refused; want the appends in one batch", batches, refused)
	}
}

// An event whose id the log already holds, or that comes twice in a batch,
// makes the server refuse the batch whole: each append is then sent alone and
// answered as alone (the copy with the first's sequence and the duplicate
// flag), the others stored.
func TestGroupCommitDuplicateSendsEachAlone(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	ctx := context.Background()
	evs := events(t, l, 4)
	first, err := l.AppendAsync(wire.RequestSubject("K"), evs[0])
	if err != nil {
		t.Fatal(err)
	}
	seq0, err := eventlog.AwaitAck(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	batch := []wire.Event{evs[1], evs[0], evs[2], evs[2], evs[3]}
	ps := groupAppendEvents(t, l, batch)
	acks := make([]*eventlog.Ack, len(ps))
	for i, p := range ps {
		acks[i] = stored(t, p)
	}
	if !acks[1].Duplicate || acks[1].Sequence != seq0 {
		t.Fatalf("the event already stored: %+v, want sequence %d, duplicate", acks[1], seq0)
	}
	if acks[2].Duplicate || !acks[3].Duplicate || acks[3].Sequence != acks[2].Sequence {
		t.Fatalf("the event twice in the batch: %+v then %+v, want the second a duplicate of the first", acks[2], acks[3])
	}
	for _, i := range []int{0, 2, 4} {
		if acks[i].Duplicate {
			t.Fatalf("append %d: %+v, want stored", i, acks[i])
		}
		holdsAt(t, l, batch[i], acks[i].Sequence)
	}
	if batches, refused := l.GroupCommits(); batches != 1 || refused != 1 {
		t.Fatalf("%d batches sent, %d refused; want one, refused", batches, refused)
	}
}

// An append over a limit of the stream's makes the server refuse the batch:
// that append alone fails, with the server's error, and the others are stored.
func TestGroupCommitRefusedAppendFailsAlone(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	ctx := context.Background()
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.MaxMsgSize = 2048
	if _, err := l.JetStream().UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	evs := events(t, l, 4)
	evs[2] = mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{"big": strings.Repeat("x", 4096)})
	ps := groupAppendEvents(t, l, evs)
	for i, p := range ps {
		seq, err := eventlog.AwaitAck(ctx, p)
		if i == 2 {
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamMessageExceedsMaximum {
				t.Fatalf("the append over the stream's limit: %v, want the server's refusal of its size", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		holdsAt(t, l, evs[i], seq)
	}
	if batches, refused := l.GroupCommits(); batches != 1 || refused != 1 {
		t.Fatalf("%d batches sent, %d refused; want one, refused", batches, refused)
	}
}

// A data stream made without group commit is updated to allow it when the log
// opens with it on; opened as it is (Existing), it is not, and the appends go
// alone; a stream that stops allowing batches while the log is open turns group
// commit off, its appends sent alone.
func TestGroupCommitStreamWithoutIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	off := openGrouped(t, dir, eventlog.GroupCommitOff, false)
	if allowsBatches(t, off) {
		t.Fatal("group commit off: the data stream allows atomic batches")
	}
	off.Close()

	existing := openGrouped(t, dir, eventlog.GroupCommitOn, true)
	for i, p := range groupAppendEvents(t, existing, events(t, existing, 5)) {
		if _, err := eventlog.AwaitAck(ctx, p); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if batches, _ := existing.GroupCommits(); batches != 0 || allowsBatches(t, existing) {
		t.Fatalf("opened as it is: %d batches sent, the stream updated %t; want none, not updated", batches, allowsBatches(t, existing))
	}
	existing.Close()

	l := openGrouped(t, dir, eventlog.GroupCommitOn, false)
	if !allowsBatches(t, l) {
		t.Fatal("group commit on: the data stream was not updated to allow atomic batches")
	}
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.AllowAtomicPublish = false
	if _, err := l.JetStream().UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		evs := events(t, l, 5)
		for i, p := range groupAppendEvents(t, l, evs) {
			seq, err := eventlog.AwaitAck(ctx, p)
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			holdsAt(t, l, evs[i], seq)
		}
	}
	if batches, refused := l.GroupCommits(); batches != 1 || refused != 1 {
		t.Fatalf("%d batches sent, %d refused; want the first refused and no other sent", batches, refused)
	}
}

func allowsBatches(t *testing.T, l *eventlog.Log) bool {
	t.Helper()
	s, err := l.JetStream().Stream(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().Config.AllowAtomicPublish
}

// By default group commit is on where it pays, the embedded server syncing
// every append, and off otherwise; a value it does not know is refused, naming
// the setting.
func TestGroupCommitDefault(t *testing.T) {
	always, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), Sync: eventlog.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer always.Close()
	if !allowsBatches(t, always) {
		t.Fatal("sync always: group commit is off")
	}
	l := openGrouped(t, t.TempDir(), "", false)
	if allowsBatches(t, l) {
		t.Fatal("sync every second: group commit is on")
	}
	err = eventlog.Config{DataDir: t.TempDir(), GroupCommit: "yes"}.ValidateSet()
	if err == nil || !strings.Contains(err.Error(), "--log-group-commit") || !strings.Contains(err.Error(), `"yes"`) {
		t.Fatalf("an unknown group commit setting: %v", err)
	}
	if _, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), GroupCommit: "yes"}); err == nil {
		t.Fatal("opened with an unknown group commit setting")
	}
}

// Many appenders at once, group commit on: each append is answered with the
// sequence that holds it, none twice.
func TestGroupCommitConcurrentAppenders(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	checkConcurrent(t, l)
}

// On a three-server cluster, the R3 data stream allows batches and the appends
// sent together are each answered with their own sequence. A cluster just
// formed may still be telling its servers where the stream's leader is (a
// batch's commit then meets no responder, and its appends go again alone,
// each to its own answer); a batch is tried again only for that reason.
func TestGroupCommitCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server cluster")
	}
	l, err := eventlog.Open(context.Background(), eventlog.Config{NATSURL: threeServers(t), Replicas: 3, GroupCommit: eventlog.GroupCommitOn})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !allowsBatches(t, l) {
		t.Fatal("the R3 data stream does not allow atomic batches")
	}
	for try := 1; ; try++ {
		batches, refused := l.GroupCommits()
		evs := events(t, l, 30)
		for i, p := range groupAppendEvents(t, l, evs) {
			seq, err := eventlog.AwaitAck(context.Background(), p)
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			holdsAt(t, l, evs[i], seq)
		}
		b, r := l.GroupCommits()
		if b-batches == 1 && r == refused {
			break
		}
		why := l.GroupRefusal()
		if b-batches != 1 || !strings.HasPrefix(why, "503") || try == 3 {
			t.Fatalf("try %d: %d batches sent, %d refused (the last for %q); want one taken", try, b-batches, r-refused, why)
		}
		t.Logf("try %d: the batch met no responder (%s); its appends went alone", try, why)
	}
	checkConcurrent(t, l)
}

// checkConcurrent appends from 16 goroutines at once and checks every answer.
func checkConcurrent(t *testing.T, l *eventlog.Log) {
	t.Helper()
	const appenders, each = 16, 20
	type answer struct {
		ev  wire.Event
		seq uint64
	}
	answers := make(chan answer, appenders*each)
	var wg sync.WaitGroup
	for g := range appenders {
		wg.Go(func() {
			for i := range each {
				ev, err := l.NewEvent(wire.TypeInvocationRequested, "test", map[string]int{"g": g, "i": i})
				if err != nil {
					t.Error(err)
					return
				}
				p, err := l.AppendAsync(wire.RequestSubject(fmt.Sprintf("G%d", g)), ev)
				if err != nil {
					t.Error(err)
					return
				}
				seq, err := eventlog.AwaitAck(context.Background(), p)
				if err != nil {
					t.Error(err)
					return
				}
				answers <- answer{ev, seq}
			}
		})
	}
	wg.Wait()
	close(answers)
	seen := map[uint64]bool{}
	for a := range answers {
		if seen[a.seq] {
			t.Fatalf("sequence %d answered twice", a.seq)
		}
		seen[a.seq] = true
		holdsAt(t, l, a.ev, a.seq)
	}
	if len(seen) != appenders*each {
		t.Fatalf("%d appends answered, want %d", len(seen), appenders*each)
	}
}
