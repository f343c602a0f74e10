package e2e_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// callEnvelope is client's request envelope for IDEM under event id evID (a
// fresh one when ""), its invocation id derived from the event id, or inv.
func callEnvelope(t *testing.T, client, body, tok, evID, inv string) (wire.Event, []byte, string) {
	t.Helper()
	req := wire.InvocationRequest{Key: "IDEM", Body: body, Token: tok, Credential: wire.ClientActor(client), InvocationID: inv}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if evID != "" {
		if inv == "" {
			req.InvocationID = wire.RequestInvocationID(evID)
		}
		if ev, err = wire.NewEventWithID(evID, ev.At, wire.TypeInvocationRequested, ev.Actor, req); err != nil {
			t.Fatal(err)
		}
	}
	b, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	return ev, b, req.InvocationID
}

// sendCall sends data as client's call and returns the receipt it is
// answered with, or why not within wait.
func sendCall(bc *busClient, client string, data []byte, wait time.Duration) (wire.Receipt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var rc wire.Receipt
	m, err := bc.nc.RequestWithContext(ctx, wire.CallSubject(client, "IDEM"), data)
	if err != nil {
		return rc, err
	}
	ev, err := wire.DecodeShared(m.Data)
	if err == nil && ev.Type != wire.TypeReceipt {
		return rc, fmt.Errorf("%s", m.Data)
	}
	if err == nil {
		err = ev.DataAs(&rc)
	}
	return rc, err
}

// The same call envelope sent again (its bytes unchanged: the same event id, so
// the same invocation id derived from it), at once and after the log's
// duplicate window, is answered with the first call's receipt, promptly; the
// upstream is called once and the log holds one receipt.
func TestBusCallEnvelopeSentAgainGetsTheFirstReceipt(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	_, envelope, inv := callEnvelope(t, "c1", "x", busToken(t, n, "c1-agent", "IDEM"), "", "")
	call := func(what string) wire.Receipt {
		t.Helper()
		start := time.Now()
		rc, err := sendCall(c1, "c1", envelope, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: no receipt after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
		}
		return rc
	}
	first := call("first call")
	if !first.OK || first.InvocationID != inv || !strings.Contains(first.Result, `"hit":1`) {
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
	_, envelope, inv := callEnvelope(t, "c1", "x", busToken(t, n, "c1-agent", "IDEM"), "", "")
	type answer struct {
		rc  wire.Receipt
		err error
	}
	call := func() chan answer {
		res := make(chan answer, 1)
		go func() {
			rc, err := sendCall(c1, "c1", envelope, 20*time.Second)
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
		events, _ := logOf(t, n, inv)
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
	if a.err != nil || b.err != nil || !a.rc.OK || b.rc.Result != a.rc.Result || b.rc.InvocationID != inv {
		t.Fatalf("first %+v %v; sent again %+v %v; want one receipt for both", a.rc.ReceiptSummary, a.err, b.rc.ReceiptSummary, b.err)
	}
	if h := w.up.Hits(); h != 1 {
		t.Fatalf("the upstream was called %d times", h)
	}
	if rcs := nodetest.Receipts(t, n.Log(), inv); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}

// Calls share messages of the log on a node no other node shares the log with,
// and each runs once: many calls at once are stored in fewer messages than
// their events, each with one request and one receipt; and an envelope sent
// twice at the same moment runs once, both calls answered with its receipt (a
// node packs no call while another under the same id is in flight on it, so no
// pack holds two requests under one id).
func TestBusCallsPackedRunOnce(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	if !n.Log().Packing() {
		t.Fatal("the node does not pack: the test would prove nothing")
	}
	c1 := w.g.connect(t, "c1")
	tok := busToken(t, n, "c1-agent", "IDEM")
	ctx := context.Background()
	before, err := n.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	const envelopes = 60
	type sent struct {
		inv   string
		first wire.Receipt
		again wire.Receipt
		errs  [2]error
	}
	calls := make([]sent, envelopes)
	var wg sync.WaitGroup
	for i := range calls {
		var envelope []byte
		_, envelope, calls[i].inv = callEnvelope(t, "c1", strconv.Itoa(i), tok, "", "")
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc, err := sendCall(c1, "c1", envelope, 20*time.Second)
				if k == 0 {
					calls[i].first = rc
				} else {
					calls[i].again = rc
				}
				calls[i].errs[k] = err
			}()
		}
	}
	wg.Wait()
	for i, c := range calls {
		if c.errs[0] != nil || c.errs[1] != nil || !c.first.OK || c.first.InvocationID != c.inv ||
			c.again.InvocationID != c.inv || c.again.Result != c.first.Result {
			t.Fatalf("envelope %d: %+v %v, sent again %+v %v; want one receipt for both", i, c.first.ReceiptSummary, c.errs[0], c.again.ReceiptSummary, c.errs[1])
		}
	}
	if h := w.up.Hits(); h != envelopes {
		t.Fatalf("the upstream was called %d times for %d envelopes", h, envelopes)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	after, err := n.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	var reqs, rcs int
	if err := n.Log().Read(ctx, wire.DataStream, before+1, func(s eventlog.Stored) error {
		switch s.Type {
		case wire.TypeInvocationRequested:
			reqs++
		case wire.TypeReceipt:
			rcs++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rcs != envelopes || reqs < envelopes {
		t.Fatalf("the log holds %d requests and %d receipts; want at least %d and %d", reqs, rcs, envelopes, envelopes)
	}
	if msgs := after - before; msgs >= uint64(reqs+rcs) {
		t.Fatalf("%d requests and %d receipts took %d messages of the log: no call was packed", reqs, rcs, msgs)
	}
}
