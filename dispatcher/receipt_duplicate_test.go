package dispatcher_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A worker whose receipt append is answered as a duplicate (another node's
// worker stored the invocation's receipt first, under the same event id, before
// this node's projection showed it) hands its callers the receipt the log
// holds, not the one it made: a caller never gets a receipt that is not in the
// log.
func TestReceiptStoredFirstElsewhereIsTheOneDelivered(t *testing.T) {
	st := newStack(t)
	var first atomic.Bool
	s := st.newService(t, func(c *dispatcher.ServiceConfig) {
		dispatcher.SetBeforeReceiptAppend(c, func(rc *wire.Receipt, ev wire.Event) {
			if !first.CompareAndSwap(false, true) {
				return
			}
			other := *rc
			other.Result = "stored by another node"
			data, err := wire.NewEventWithID(ev.ID, rc.FinishedAt, wire.TypeReceipt, ev.Actor, other)
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p, err := st.log.AppendAsync(wire.ReceiptSubject(rc.Key), data)
			if err == nil {
				_, err = eventlog.AwaitAck(ctx, p)
			}
			if err != nil {
				t.Error(err)
			}
		})
	})
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("ECHO", "echo", "# WHAT: echo"))
	rc := invoke(t, s, "ECHO", "hello")
	if rc.Result != "stored by another node" {
		t.Fatalf("the caller got result %q; want the receipt the log holds (%q)", rc.Result, "stored by another node")
	}
	if n := receiptsFor(t, st.log, rc.InvocationID); n != 1 {
		t.Fatalf("%d receipts for %s in the log, want 1", n, rc.InvocationID)
	}
}
