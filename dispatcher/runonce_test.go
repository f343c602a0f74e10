package dispatcher_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// signalHandler signals on its channel at every warning whose message holds
// match; it writes nothing.
type signalHandler struct {
	slog.Handler
	match string
	ch    chan struct{}
}

func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, h.match) {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// A redelivered request whose receipt is in the log, but not yet in this node's
// projection, is not run again: the worker waits until the projection has caught
// up with the log, however long that takes (here the fold is held behind the
// request, so every wait times out until the test lets it go), and then finds
// the receipt and acknowledges the request. Before, a wait that timed out was
// logged and the request ran against the lagging projection: a second call of
// an acknowledged invocation.
func TestRedeliveryIsNotRunAgainstALaggingProjection(t *testing.T) {
	st := newStack(t)
	var runs atomic.Int32
	holding := make(chan struct{})
	st.fns.Register("count", func(context.Context, []any) (string, error) {
		if runs.Add(1) == 1 {
			// Its receipt is appended once the fold holds the batch that
			// applied the request, so it cannot be in that batch.
			<-holding
		}
		return "counted", nil
	})
	// Hold the data-stream fold once it has applied the request: the receipt
	// appended after it stays out of the projection.
	var hold atomic.Bool
	release := make(chan struct{})
	st.proj.OnApplied(func(stream string, batch []eventlog.Stored) {
		if stream != wire.DataStream || !hold.Load() {
			return
		}
		for _, e := range batch {
			if e.Event.Type == wire.TypeInvocationRequested && hold.CompareAndSwap(true, false) {
				close(holding)
				<-release
				return
			}
		}
	})
	var crashed atomic.Bool
	waiting := make(chan struct{}, 1)
	s := st.newService(t, func(c *dispatcher.ServiceConfig) {
		c.AckWait = 300 * time.Millisecond
		c.Logger = slog.New(signalHandler{Handler: quiet.Handler(), match: "projection", ch: waiting})
		dispatcher.SetFailpoints(c, nil, func(*wire.InvocationRequest) error {
			if crashed.CompareAndSwap(false, true) {
				return errCrash // the receipt is in the log; the ack is lost
			}
			return nil
		})
	})
	st.run(t)
	st.putRow(t, fnRow("COUNT", "count", "# WHAT: count runs"))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold.Store(true)
	rc := invoke(t, s, "COUNT", "x")
	select {
	case <-waiting: // the redelivery met the lagging projection
	case <-time.After(time.Minute): // a bound for a stuck run, not a speed target
		close(release)
		t.Fatal("no redelivery met the lagging projection within a minute: its warning was never logged")
	}
	close(release)
	nodetest.WaitDispatchIdle(t, st.log)
	if n := receiptsFor(t, st.log, rc.InvocationID); n != 1 {
		t.Fatalf("%d receipts for %s, want exactly 1", n, rc.InvocationID)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the function ran %d times for one acknowledged invocation", n)
	}
}

// A consumer whose leader changes may deliver again, as a first delivery, a
// request the old leader delivered and another node ran: after the dispatch
// consumer's leader election is announced, a request stored before it is looked
// up before it runs. Here the request comes with its receipt already in the log
// (as the node that ran it appended it), reaches the only worker as a first
// delivery once the election is announced, and is acknowledged without a run.
// Before, a fresh first delivery with an id capdir minted was run unchecked.
func TestRequestStoredBeforeALeaderElectionIsChecked(t *testing.T) {
	st := newStack(t)
	var runs atomic.Int32
	st.fns.Register("count", func(context.Context, []any) (string, error) {
		runs.Add(1)
		return "counted", nil
	})
	busy, free := make(chan struct{}), make(chan struct{})
	st.fns.Register("block", func(context.Context, []any) (string, error) {
		close(busy)
		<-free
		return "done", nil
	})
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Workers = 1 })
	st.run(t)
	st.putRow(t, fnRow("COUNT", "count", "# WHAT: count runs"))
	st.putRow(t, fnRow("BLOCK", "block", "# WHAT: hold the worker"))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	blocked := make(chan wire.Receipt, 1)
	go func() { blocked <- invoke(t, s, "BLOCK", "x") }()
	<-busy // the one worker is held: the next request waits for it

	ctx := context.Background()
	req := wire.InvocationRequest{Key: "COUNT", Body: "x", Credential: "owner:terminal-key"}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.log.Append(ctx, wire.RequestSubject("COUNT"), ev); err != nil {
		t.Fatal(err)
	}
	var rc wire.Receipt
	rc.InvocationID, rc.Trace, rc.Key, rc.Worker = req.InvocationID, req.Trace, "COUNT", "lost-node"
	rc.Status, rc.Result, rc.FinishedAt = wire.StatusProvenMaterialResult, "counted", time.Now().UTC()
	rev, err := wire.NewEvent(rc.FinishedAt, wire.TypeReceipt, "engine:lost-node", rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.log.Append(ctx, wire.ReceiptSubject("COUNT"), rev); err != nil {
		t.Fatal(err)
	}
	// The advisory JetStream sends when the consumer elects a leader.
	nc := st.log.Conn()
	if err := nc.Publish("$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED."+wire.DataStream+"."+dispatcher.ConsumerName, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for !dispatcher.ElectionHeard(s) { // the advisory and the request travel apart
		time.Sleep(time.Millisecond)
	}
	close(free)
	<-blocked
	nodetest.WaitDispatchIdle(t, st.log)
	if n := runs.Load(); n != 0 {
		t.Fatalf("a request whose receipt was in the log ran %d times", n)
	}
	if n := receiptsFor(t, st.log, req.InvocationID); n != 1 {
		t.Fatalf("%d receipts for %s, want exactly 1", n, req.InvocationID)
	}
}
