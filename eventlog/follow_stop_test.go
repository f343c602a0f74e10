package eventlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// A follower whose context ends while its stream is deleted and created again
// returns. The stream's deletion makes the client's ordered iterator recreate its
// consumer, and a Stop that lands while it does so can be missed: the iterator
// then waits on its new consumer for good. A follower that waited for its reader
// to see the Stop hung with it, and so did everyone waiting for the follower (the
// projector's Run, and the node's report of the log replaced under it).
func TestFollowBatchesReturnsWhenStoppedDuringAStreamsRecreation(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	l := logtest.Open(t, "")
	appendReceipts(t, l, 3)
	// The iterator's new consumer is announced as it is created: stopping then
	// lands while the iterator waits for its creation's answer.
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
		appendReceipts(t, l, 3)
		select {
		case <-created:
		case <-time.After(5 * time.Second):
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the follower did not return after its context ended", i)
		}
	}
}
