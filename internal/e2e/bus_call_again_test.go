package e2e_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// The same call envelope sent again (its bytes unchanged: the same event id, so
// the same invocation id derived from it), at once and after the log's
// duplicate window, is answered with the first call's receipt, promptly; the
// upstream is called once and the log holds one receipt.
func TestBusCallEnvelopeSentAgainGetsTheFirstReceipt(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	req := wire.InvocationRequest{Key: "IDEM", Body: "x", Token: busToken(t, n, "c1-agent", "IDEM"),
		Credential: wire.ClientActor("c1")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	envelope, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	call := func(what string) wire.Receipt {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		m, err := c1.nc.RequestWithContext(ctx, wire.CallSubject("c1", "IDEM"), envelope)
		if err != nil {
			t.Fatalf("%s: no reply after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
		}
		got, err := wire.DecodeShared(m.Data)
		if err != nil || got.Type != wire.TypeReceipt {
			t.Fatalf("%s: %s %v; want a RECEIPT", what, m.Data, err)
		}
		var rc wire.Receipt
		if err := got.DataAs(&rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	first := call("first call")
	if !first.OK || first.InvocationID != req.InvocationID || !strings.Contains(first.Result, `"hit":1`) {
		t.Fatalf("first call: %+v %s", first.ReceiptSummary, first.Result)
	}
	for _, what := range []string{"sent again at once", "sent again after the duplicate window"} {
		if strings.HasSuffix(what, "window") {
			pastWindow()
		}
		rc := call(what)
		if rc.InvocationID != first.InvocationID || rc.Result != first.Result || rc.Trace != first.Trace {
			t.Fatalf("%s: %+v %s; want the first receipt %+v %s", what, rc.ReceiptSummary, rc.Result, first.ReceiptSummary, first.Result)
		}
		if h := w.up.Hits(); h != 1 {
			t.Fatalf("%s: the upstream was called %d times", what, h)
		}
	}
	if rcs := nodetest.Receipts(t, n.Log(), first.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}

// The same envelope sent again after the duplicate window while its first call
// still runs waits for that call's receipt: both calls get it, and the upstream
// is called once.
func TestBusCallEnvelopeSentAgainWhileItRunsGetsItsReceipt(t *testing.T) {
	w := newIdemWorld(t, idemWindow, true)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	req := wire.InvocationRequest{Key: "IDEM", Body: "x", Token: busToken(t, n, "c1-agent", "IDEM"),
		Credential: wire.ClientActor("c1")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	envelope, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		rc  wire.Receipt
		err error
	}
	call := func() chan answer {
		res := make(chan answer, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			m, err := c1.nc.RequestWithContext(ctx, wire.CallSubject("c1", "IDEM"), envelope)
			if err != nil {
				res <- answer{err: err}
				return
			}
			got, err := wire.DecodeShared(m.Data)
			var rc wire.Receipt
			if err == nil && got.Type != wire.TypeReceipt {
				err = errors.New(string(m.Data))
			}
			if err == nil {
				err = got.DataAs(&rc)
			}
			res <- answer{rc, err}
		}()
		return res
	}
	first := call()
	<-w.up.Arrived()
	pastWindow()
	again := call()
	// The second call's request is stored (a new message past the window)
	// before the first is let go.
	deadline := time.Now().Add(10 * time.Second)
	for {
		events, _ := logOf(t, n, req.InvocationID)
		if strings.Count(strings.Join(events, " "), wire.TypeInvocationRequested) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the envelope sent again was not stored: %v", events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.up.Release()
	a, b := <-first, <-again
	if a.err != nil || b.err != nil || !a.rc.OK || b.rc.Result != a.rc.Result || b.rc.InvocationID != req.InvocationID {
		t.Fatalf("first %+v %v; sent again %+v %v; want one receipt for both", a.rc.ReceiptSummary, a.err, b.rc.ReceiptSummary, b.err)
	}
	if h := w.up.Hits(); h != 1 {
		t.Fatalf("the upstream was called %d times", h)
	}
	if rcs := nodetest.Receipts(t, n.Log(), req.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}
