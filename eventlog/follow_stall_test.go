package eventlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// A follower whose consumer goes silent while the stream grows (as the
// client's ordered consumer was seen to after a cluster's server was killed)
// follows again from the next sequence: every event is handed over once, in
// order. One that has read everything is not disturbed.
func TestAFollowerWhoseConsumerGoesSilentFollowsAgain(t *testing.T) {
	l := logtest.Open(t, "")
	l.StallFollowers(600*time.Millisecond, 3)
	appendReceipts(t, l, 3)
	got := make(chan uint64, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(ctx, wire.DataStream, 1, func(s eventlog.Stored) error {
			got <- s.Seq
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("follow: %v", err)
		}
	}()
	receive := func(want uint64) {
		t.Helper()
		select {
		case seq := <-got:
			if seq != want {
				t.Fatalf("event at %d handed over; want %d", seq, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("event %d never handed over", want)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		receive(seq)
	}
	// Silent now, with nothing more to read: left alone.
	select {
	case seq := <-got:
		t.Fatalf("event %d from a stream of 3", seq)
	case <-time.After(2 * time.Second):
	}
	appendReceipts(t, l, 5)
	for seq := uint64(4); seq <= 8; seq++ {
		receive(seq)
	}
	select {
	case seq := <-got:
		t.Fatalf("event %d handed over again", seq)
	case <-time.After(time.Second):
	}
}
