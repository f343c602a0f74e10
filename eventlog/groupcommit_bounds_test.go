package eventlog_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A batch refused whole (an event id already stored) is sent again one append
// at a time while its callers wait on their appends: nothing the callers read
// is written under them (run with -race).
func TestGroupCommitRefusedBatchSentAgainWhileCallersWait(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	ctx := context.Background()
	for round := 0; round < 20; round++ {
		evs := events(t, l, 3)
		first, err := l.AppendAsync(wire.RequestSubject("K"), evs[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eventlog.AwaitAck(ctx, first); err != nil {
			t.Fatal(err)
		}
		release := l.HoldGroup()
		var ps []*eventlog.Pending
		for _, ev := range []wire.Event{evs[1], evs[0], evs[2]} { // evs[0] again: the batch is refused
			p, err := l.AppendAsync(wire.RequestSubject("K"), ev)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, p := range ps {
			wg.Add(1)
			go func(p *eventlog.Pending) {
				defer wg.Done()
				<-start
				for i := 0; i < 2000; i++ {
					eventlog.AwaitAckWithin(ctx, p, 0)
				}
				if _, err := eventlog.AwaitAckWithin(ctx, p, 10*time.Second); err != nil {
					t.Errorf("round %d: an append of a refused batch: %v", round, err)
				}
			}(p)
		}
		close(start)
		release()
		wg.Wait()
	}
	if _, refused := l.GroupCommits(); refused == 0 {
		t.Fatal("no batch was refused")
	}
}

// An append waiting to go out in a batch has not started its
// Config.AckTimeout, so a caller's bound (AwaitAckWithin) holds even when it is
// longer than that timeout.
func TestGroupCommitWaitingAppendKeepsTheCallersBound(t *testing.T) {
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), GroupCommit: eventlog.GroupCommitOn, AckTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	release := l.HoldGroup() // a leader that is never answered
	defer release()
	p, err := l.AppendAsync(wire.RequestSubject("K"), events(t, l, 1)[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := eventlog.AwaitAckWithin(ctx, p, 200*time.Millisecond); !errors.Is(err, eventlog.ErrAckTimeout) {
		t.Fatalf("waited on an append held for its batch: %v; want ErrAckTimeout once the caller's bound passed", err)
	}
}
