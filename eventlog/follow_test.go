package eventlog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// follow runs FollowBatches in the background and returns the batch sizes it
// hands over, one per receive.
func follow(t *testing.T, l *eventlog.Log, opts eventlog.FollowOptions) <-chan int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sizes := make(chan int, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.FollowBatches(ctx, wire.DataStream, 1, opts, func(b []eventlog.Stored) error {
			sizes <- len(b)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return sizes
}

func appendReceipts(t *testing.T, l *eventlog.Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		ev := mustEvent(t, l, wire.TypeReceipt, map[string]any{"invocation_id": "inv_x", "i": i})
		if _, err := l.Append(context.Background(), wire.ReceiptSubject("K"), ev); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFollowBatchesLingersForMore(t *testing.T) {
	l := logtest.Open(t, "")
	sizes := follow(t, l, eventlog.FollowOptions{Max: 3, Linger: time.Minute, LingerFrom: 1})
	appendReceipts(t, l, 1)
	// Without a linger the first event would be handed over alone by now.
	time.Sleep(100 * time.Millisecond)
	appendReceipts(t, l, 2)
	wantBatch(t, sizes, 3, "a full batch was not handed over before the linger ended")
}

func TestFollowBatchesHurryEndsTheLinger(t *testing.T) {
	l := logtest.Open(t, "")
	hurry := make(chan struct{}, 1)
	sizes := follow(t, l, eventlog.FollowOptions{Max: 100, Linger: time.Minute, LingerFrom: 1, Hurry: hurry})
	appendReceipts(t, l, 1)
	time.Sleep(100 * time.Millisecond)
	hurry <- struct{}{}
	wantBatch(t, sizes, 1, "the batch waited out its linger although hurried")
}

func TestFollowBatchesWithoutLingerHandsOverAtOnce(t *testing.T) {
	l := logtest.Open(t, "")
	sizes := follow(t, l, eventlog.FollowOptions{Max: 100})
	appendReceipts(t, l, 1)
	wantBatch(t, sizes, 1, "no batch handed over")
}

// With LingerFrom 2 a lone event is handed over at once, however long the linger:
// under light load nothing waits for it.
func TestFollowBatchesLoneEventDoesNotLinger(t *testing.T) {
	l := logtest.Open(t, "")
	sizes := follow(t, l, eventlog.FollowOptions{Max: 100, Linger: time.Minute, LingerFrom: 2})
	appendReceipts(t, l, 1)
	wantBatch(t, sizes, 1, "a lone event waited for the linger")
}

// wantBatch fails unless the next batch handed over holds want events; why says
// what it means when none comes.
func wantBatch(t *testing.T, sizes <-chan int, want int, why string) {
	t.Helper()
	select {
	case n := <-sizes:
		if n != want {
			t.Fatalf("batch has %d events, want %d", n, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(why)
	}
}

// A follow stopped before it has started returns nil, as one stopped later does.
func TestFollowStoppedBeforeItStartsReturnsNil(t *testing.T) {
	l := logtest.Open(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Follow(ctx, wire.DataStream, 1, func(eventlog.Stored) error { return nil }); err != nil {
		t.Fatalf("follow with a done context: %v", err)
	}
}

// A range read lingering for full batches hands over the batch that reaches the
// range's end at once: there is nothing more to wait for.
func TestReadRangeWithEndsTheLingerAtTheRangesEnd(t *testing.T) {
	l := logtest.Open(t, "")
	appendReceipts(t, l, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sizes []int
	err := l.ReadRangeWith(ctx, wire.DataStream, 1, 5, eventlog.FollowOptions{Max: 100, Linger: time.Hour}, func(b []eventlog.Stored) error {
		sizes = append(sizes, len(b))
		return nil
	})
	if err != nil || ctx.Err() != nil {
		t.Fatalf("read: %v (context %v)", err, ctx.Err())
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total != 5 {
		t.Fatalf("batches %v, want the range's 5 events", sizes)
	}
}

// A range read stopped by its context before it has delivered the range's end
// says so: it returned nil, and a rebuild took a stopped read for the whole log.
// (Once ctx has ended, the reader may still hand over a batch or two: with 300
// events in the range it does not reach the end.)
func TestReadRangeStoppedBeforeItsEndSaysSo(t *testing.T) {
	l := logtest.Open(t, "")
	appendReceipts(t, l, 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := 0
	err := l.ReadRange(ctx, wire.DataStream, 1, 300, 2, func(b []eventlog.Stored) error {
		if got += len(b); got >= 4 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || got >= 300 {
		t.Fatalf("a read stopped after %d of 300 events returned %v, want context.Canceled", got, err)
	}
	if !strings.Contains(err.Error(), "of 1..300") {
		t.Errorf("the error does not say where the read stopped: %v", err)
	}
	// A whole read, and a read of nothing, return nil.
	if err := l.ReadRange(context.Background(), wire.DataStream, 1, 300, 64, func([]eventlog.Stored) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := l.ReadRange(context.Background(), wire.DataStream, 301, 300, 3, func([]eventlog.Stored) error { return nil }); err != nil {
		t.Fatal(err)
	}
}
