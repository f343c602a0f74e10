package eventlog_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// A follower handing over one event at a time (Follow, Read's handler) still
// pulls many messages at a time: with pulls of two, the client often took the
// last message of a pull while still sending it, and then asked for no more
// until its missed-heartbeat check two seconds later (see minPull); a read of a
// thousand events under the race detector took over ten seconds.
func TestFollowingOneEventAtATimePullsManyMessagesAtATime(t *testing.T) {
	l := logtest.Open(t, "")
	appendReceipts(t, l, 5)
	pulls, err := l.JetStream().Conn().SubscribeSync("$JS.API.CONSUMER.MSG.NEXT." + wire.DataStream + ".>")
	if err != nil {
		t.Fatal(err)
	}
	defer pulls.Unsubscribe()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var read []uint64
	if err := l.Read(ctx, wire.DataStream, 1, func(s eventlog.Stored) error {
		read = append(read, s.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(read) != 5 || read[0] != 1 || read[4] != 5 {
		t.Fatalf("read %v, want sequences 1..5", read)
	}
	checkPull(t, pulls, "Read")

	seen := make(chan uint64, 10)
	fctx, fcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(fctx, wire.DataStream, 1, func(s eventlog.Stored) error {
			seen <- s.Seq
			return nil
		})
	}()
	for want := uint64(1); want <= 5; want++ {
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("Follow handed over sequence %d, want %d", got, want)
			}
		case <-ctx.Done():
			t.Fatal("Follow handed over nothing")
		}
	}
	fcancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkPull(t, pulls, "Follow")
}

// checkPull reads the first pull request on pulls and fails unless it asked for
// at least 64 messages.
func checkPull(t *testing.T, pulls *nats.Subscription, who string) {
	t.Helper()
	m, err := pulls.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("%s: no pull request seen: %v", who, err)
	}
	var req struct {
		Batch int `json:"batch"`
	}
	if err := json.Unmarshal(m.Data, &req); err != nil {
		t.Fatalf("%s: pull request %q: %v", who, m.Data, err)
	}
	if req.Batch < 64 {
		t.Fatalf("%s pulled %d messages at a time, want at least 64", who, req.Batch)
	}
	for { // the pulls that followed it
		if _, err := pulls.NextMsg(50 * time.Millisecond); err != nil {
			return
		}
	}
}
