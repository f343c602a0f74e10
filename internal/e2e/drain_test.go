package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

type invokeResult struct {
	rc  wire.Receipt
	err error
}

func invokeAsync(ctx context.Context, n *capdir.Node, key string) <-chan invokeResult {
	ch := make(chan invokeResult, 1)
	go func() {
		rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: key, Body: "x", Credential: api.OwnerActor})
		ch <- invokeResult{rc, err}
	}()
	return ch
}

// drainConfig runs nodes on one data dir, with a short ack wait so that anything
// left unacknowledged is redelivered within the test.
func drainConfig(dir string) func(*capdir.Config) {
	return func(c *capdir.Config) {
		c.Log.DataDir = dir
		c.Dispatch.AckWait = time.Second
		c.Dispatch.Workers = 2
		c.HTTPRunner.Timeout = 30 * time.Second
	}
}

// A rolling restart does not cut calls off: Node.Stop lets the call in flight
// finish and write its receipt, and the restarted node does not run it again.
func TestNodeStopLetsTheCallInFlightFinish(t *testing.T) {
	up := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "released"))
	cfg := drainConfig(t.TempDir())
	first := nodetest.Start(t, cfg)
	const key = "DRAIN_SLOW"
	addHTTPRow(t, first, key, "GET "+up.URL+"/slow", "")
	ictx, icancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer icancel()
	got := invokeAsync(ictx, first, key)
	<-up.Arrived()

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- first.Stop(ctx)
	}()
	// The node is stopping; the call must be left to run. (Stop without a drain
	// cancels it at once, which the upstream sees within milliseconds.)
	select {
	case <-up.Left():
		t.Fatal("Stop cut the call in flight off")
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a call was in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	up.Release()
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	r := <-got
	if r.err != nil || r.rc.Status != wire.StatusProvenMaterialResult || r.rc.Result != "HTTP 200:released" {
		t.Fatalf("the caller got %+v, %v", r.rc, r.err)
	}

	// Restart on the same data: nothing is redelivered, nothing runs again.
	second := nodetest.Start(t, cfg)
	nodetest.WaitDispatchIdle(t, second.Log())
	if n := up.Hits(); n != 1 {
		t.Fatalf("the upstream was called %d times, want once", n)
	}
	rcs := nodetest.Receipts(t, second.Log(), r.rc.InvocationID)
	if len(rcs) != 1 || rcs[0].Status != wire.StatusProvenMaterialResult || rcs[0].Result != "HTTP 200:released" {
		t.Fatalf("receipts in the log: %+v", rcs)
	}
}

// A drain past its deadline cancels the call in flight, which gets no receipt;
// Stop says so; the next start runs the request again, once, with one receipt.
func TestNodeStopPastItsDeadlineCancelsAndRedelivers(t *testing.T) {
	up := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "released"))
	cfg := drainConfig(t.TempDir())
	first := nodetest.Start(t, cfg)
	const key = "DRAIN_STUCK"
	addHTTPRow(t, first, key, "GET "+up.URL+"/stuck", "")
	ictx, icancel := context.WithCancel(context.Background())
	got := invokeAsync(ictx, first, key)
	<-up.Arrived()
	icancel() // the caller stops waiting; it keeps the invocation id
	r := <-got
	if !errors.Is(r.err, dispatcher.ErrPending) {
		t.Fatalf("invoke: %v", r.err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := first.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, dispatcher.ErrDrainCut) {
		t.Fatalf("stop past its deadline: %v", err)
	}
	if again := first.Stop(context.Background()); again == nil || again.Error() != err.Error() {
		t.Fatalf("a second Stop: %v", again)
	}
	<-up.Left() // the call was cancelled
	up.Release()

	second := nodetest.Start(t, cfg)
	rc := awaitReceipt(t, second, r.rc.InvocationID)
	nodetest.WaitDispatchIdle(t, second.Log())
	if rc.Status != wire.StatusProvenMaterialResult || rc.Result != "HTTP 200:released" {
		t.Fatalf("receipt of the redelivered call: %+v", rc)
	}
	if n := up.Hits(); n != 2 {
		t.Fatalf("the upstream was called %d times, want the cancelled call and the rerun", n)
	}
	if rcs := nodetest.Receipts(t, second.Log(), r.rc.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}

// awaitReceipt waits until n's projection holds inv's receipt.
func awaitReceipt(t *testing.T, n *capdir.Node, inv string) wire.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if err := nodetest.CatchUp(ctx, n); err != nil {
			t.Fatalf("no receipt for %s: %v", inv, err)
		}
		if rc, _, err := n.Projector().Receipt(inv); err == nil {
			return rc
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no receipt for %s", inv)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
