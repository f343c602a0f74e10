package eventlog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// An async append is answered as the stream answers it: a copy of an event the
// log holds with the first's sequence and the duplicate flag, a wrong expected
// sequence with ErrConflict, a message past the server's limit at once; Notify
// sends what was stored.
func TestAppendAsyncAnswers(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	ev := mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": "first"})
	first, err := l.AppendAsync(wire.DirectorySubject("K"), ev, eventlog.ExpectLastSubjectSeq(0))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := eventlog.AwaitAck(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.AppendAsync(wire.DirectorySubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	if ack := <-again.Stored(); ack.Sequence != seq || !ack.Duplicate || ack.Stream != wire.ControlStream {
		t.Fatalf("the same event again: %+v, want sequence %d of %s, duplicate", ack, seq, wire.ControlStream)
	}
	stale, err := l.AppendAsync(wire.DirectorySubject("K"), mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": "stale"}), eventlog.ExpectLastSubjectSeq(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.AwaitAck(ctx, stale); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("a wrong expected sequence: %v, want ErrConflict", err)
	}
	<-stale.Failed()
	if err := stale.Err(); !errors.Is(eventlog.AppendError(err), eventlog.ErrConflict) {
		t.Fatalf("Failed closed with Err %v, want an error AppendError reads as ErrConflict", err)
	}
	next, err := l.AppendAsync(wire.DirectorySubject("K"), mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": "next"}), eventlog.ExpectLastSubjectSeq(seq))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := eventlog.AwaitAckWithin(ctx, next, time.Minute); err != nil || s <= seq {
		t.Fatalf("the expected sequence: %d, %v; want past %d", s, err, seq)
	}

	sub, err := l.Conn().SubscribeSync("notice.K")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Notify("notice.K", next); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"next"`) {
		t.Fatalf("notice %v (%v), want the stored event", m, err)
	}

	huge := mustEvent(t, l, wire.TypeDirectoryMutate, strings.Repeat("x", l.MaxPayload()))
	if _, err := l.AppendAsync(wire.DirectorySubject("K"), huge); err == nil || !strings.Contains(err.Error(), "maximum payload") {
		t.Fatalf("a message past the server's limit: %v, want it refused at once", err)
	}
	if n := l.PendingAppends(); n != 0 {
		t.Fatalf("%d appends still pending", n)
	}
}

// An append no stream answers for (none takes its subject: a stream without a
// leader answers the same) is sent again until Config.ElectionWait has passed,
// then fails with ErrElecting; nothing stays pending.
func TestAppendAsyncNoStream(t *testing.T) {
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), ElectionWait: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.JetStream().DeleteStream(context.Background(), wire.DataStream); err != nil {
		t.Fatal(err)
	}
	f, err := l.AppendAsync(wire.ReceiptSubject("K"), mustEvent(t, l, wire.TypeReceipt, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.AwaitAck(context.Background(), f); !errors.Is(err, eventlog.ErrElecting) {
		t.Fatalf("err = %v, want ErrElecting", err)
	}
	if n := l.PendingAppends(); n != 0 {
		t.Fatalf("%d appends still pending", n)
	}
}

// Many appends in flight at once are each answered with their own sequence.
func TestAppendAsyncManyInFlight(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	const writers, each = 16, 40
	seqs := make(chan uint64, writers*each)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs := make([]*eventlog.Pending, 0, each)
			for i := 0; i < each; i++ {
				ev, err := l.NewEvent(wire.TypeReceipt, "test", i)
				if err != nil {
					t.Error(err)
					return
				}
				f, err := l.AppendAsync(wire.ReceiptSubject("K"), ev)
				if err != nil {
					t.Error(err)
					return
				}
				fs = append(fs, f)
			}
			for _, f := range fs {
				seq, err := eventlog.AwaitAck(ctx, f)
				if err != nil {
					t.Error(err)
					return
				}
				seqs <- seq
			}
		}()
	}
	wg.Wait()
	close(seqs)
	seen := map[uint64]bool{}
	for s := range seqs {
		if seen[s] || s < 1 || s > writers*each {
			t.Fatalf("sequence %d answered twice or out of range", s)
		}
		seen[s] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("%d sequences answered, want %d", len(seen), writers*each)
	}
}
