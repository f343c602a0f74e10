package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// consumersOf are the names of stream's consumers on the server.
func consumersOf(t *testing.T, l *eventlog.Log, stream string) []string {
	t.Helper()
	s, err := l.JetStream().Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	names := s.ConsumerNames(context.Background())
	var out []string
	for n := range names.Name() {
		out = append(out, n)
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// noConsumerLeft fails when, once the followers that returned are reaped (a
// reaper ends when its follower's reader has returned), the data stream still
// has a consumer.
func noConsumerLeft(t *testing.T, l *eventlog.Log, how string) {
	t.Helper()
	l.WaitReapers()
	if left := consumersOf(t, l, wire.DataStream); len(left) > 0 {
		t.Fatalf("%s: consumers left on the server: %v", how, left)
	}
}

// Every way out of a follower removes its consumer from the server: its
// context ending, its handler's error, and a read that reached its end.
func TestAFollowerLeavesNoConsumer(t *testing.T) {
	l := logtest.Open(t, "")
	appendReceipts(t, l, 3)

	ctx, cancel := context.WithCancel(context.Background())
	err := l.Follow(ctx, wire.DataStream, 1, func(eventlog.Stored) error { cancel(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	noConsumerLeft(t, l, "context ended")

	boom := errors.New("boom")
	if err := l.Follow(context.Background(), wire.DataStream, 1, func(eventlog.Stored) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("handler error: %v", err)
	}
	noConsumerLeft(t, l, "handler error")

	if err := l.ReadRange(context.Background(), wire.DataStream, 1, 3, 2, func([]eventlog.Stored) error { return nil }); err != nil {
		t.Fatal(err)
	}
	noConsumerLeft(t, l, "read to its end")
}

// A follower whose context ends while its stream is deleted and created again
// (its iterator recreating its consumer, where a Stop can be missed and the
// reader go on pulling from the new consumer) leaves no consumer either.
func TestAFollowerStoppedDuringARecreationLeavesNoConsumer(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	l := logtest.Open(t, "")
	appendReceipts(t, l, 3)
	created := make(chan struct{}, 16)
	sub, err := l.Conn().Subscribe("$JS.EVENT.ADVISORY.CONSUMER.CREATED."+wire.DataStream+".*", func(*nats.Msg) {
		select {
		case created <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for i := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		read := make(chan struct{}, 16)
		done := make(chan error, 1)
		go func() {
			done <- l.FollowBatches(ctx, wire.DataStream, 1, eventlog.FollowOptions{Max: 8}, func([]eventlog.Stored) error {
				select {
				case read <- struct{}{}:
				default:
				}
				return nil
			})
		}()
		select {
		case <-read:
		case <-time.After(30 * time.Second):
			t.Fatal("the follower read nothing")
		}
		for len(created) > 0 {
			<-created
		}
		logtest.Recreate(t, l, wire.DataStream)
		if i%2 == 1 { // stop as the iterator sets out to make its new consumer
			cancel()
		}
		appendReceipts(t, l, 3)
		select { // or as the new consumer is made (or, should it come first, later)
		case <-created:
		case <-time.After(5 * time.Second):
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		noConsumerLeft(t, l, "stopped during a recreation")
	}
}
