package eventlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// A durable consumer opened again counts what its earlier opening was delivered and
// never acknowledged; Reset delivers those again at once, not after AckWait.
func TestDurableBacklogAndReset(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	d := eventlog.Durable{Name: "durable_test", Subjects: []string{wire.RequestSubject("K")}, AckWait: time.Hour, MaxDeliver: 5, MaxAckPending: 16}
	ids := map[uint64]string{}
	for range 3 {
		ev := mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{"key": "K"})
		seq, err := l.Append(ctx, wire.RequestSubject("K"), ev)
		if err != nil {
			t.Fatal(err)
		}
		ids[seq] = ev.ID
	}
	got := make(chan eventlog.Msg, 16)
	consume := func() (*eventlog.Consumer, eventlog.Consumption) {
		c, err := l.OpenDurable(ctx, wire.DataStream, d)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := c.Consume(4, func(m eventlog.Msg) { got <- m })
		if err != nil {
			t.Fatal(err)
		}
		return c, cc
	}
	_, cc := consume()
	first := <-got
	if md, err := first.Metadata(); err != nil || md.NumDelivered != 1 || md.Timestamp.IsZero() || first.ID() != ids[md.StreamSeq] {
		t.Fatalf("first delivery: id %q, metadata %+v (%v); appended %v", first.ID(), md, err, ids)
	}
	first.Ack()
	<-got
	<-got // delivered, never acknowledged
	cc.Drain()
	<-cc.Closed()

	// The server takes an acknowledgement in after the client has sent it (its
	// consumer's own queue): opened again before then, the consumer still counts
	// the first message. Opened again until it counts the two never acknowledged.
	var c *eventlog.Consumer
	var unacked, waiting int
	var floor uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if c, err = l.OpenDurable(ctx, wire.DataStream, d); err != nil {
			t.Fatal(err)
		}
		if unacked, floor, waiting = c.Backlog(); unacked == 2 && waiting == 0 || time.Now().After(deadline) {
			break
		}
	}
	if unacked != 2 || waiting != 0 {
		t.Fatalf("Backlog = %d unacked, floor %d, %d waiting; want 2 unacked, none waiting", unacked, floor, waiting)
	}
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	cc, err := c.Consume(4, func(m eventlog.Msg) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Drain()
	for range 2 {
		m := <-got // within AckWait (an hour): only Reset delivers them now
		if md, _ := m.Metadata(); md.StreamSeq <= floor {
			t.Fatalf("delivered again stream sequence %d, at or below the floor %d", md.StreamSeq, floor)
		}
		m.Ack()
	}
}
