package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A bus client's call as one request-reply (wire.Call): the reply is the receipt,
// and the log holds what a published request leaves there.

// busCall is wire.Call with a test's deadline.
func busCall(t *testing.T, bc *busClient, client, key, body string, opts ...wire.InvokeOption) (wire.Receipt, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return wire.Call(ctx, bc.nc, client, key, body, opts...)
}

// logOf is what the data stream holds of one invocation: each event's type and
// subject, in log order, and the request event's bytes.
func logOf(t *testing.T, n *capdir.Node, inv string) (events []string, request []byte) {
	t.Helper()
	err := n.Log().Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var ids struct {
			InvocationID string `json:"invocation_id"`
		}
		if s.DataAs(&ids) != nil || ids.InvocationID != inv {
			return nil
		}
		subject := s.Subject
		if s.Type == wire.TypeInvocationRequested {
			var err error
			if request, err = wire.Encode(&s.Event); err != nil {
				return err
			}
		}
		events = append(events, s.Type+" "+subject)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, request
}

// The happy path and the gate's refusals: a call with a token gets its receipt;
// without one, with a malformed or a revoked one, the gate's refusal receipt,
// the same as for a published request; and the log holds, for a call, what it
// holds for a published request: the request the client sent, byte for byte, on
// its request subject, and one receipt.
func TestBusCallAnswersWithItsReceipt(t *testing.T) {
	g := startGuardedNode(t)
	c1 := g.connect(t, "c1")
	tok := busToken(t, g.n, "c1-agent", "GREET")
	revoked := mint(t, g.n, `{"sub":"c1-agent","scope":{"keys":["GREET"]}}`)
	if code, body := nodetest.Do(t, g.n, "DELETE", "/api/tokens/"+revoked.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	for _, c := range []struct {
		name           string
		opts           []wire.InvokeOption
		status, result string
		actor          string
	}{
		{"with a token", []wire.InvokeOption{wire.WithToken(tok)}, wire.StatusProvenMaterialResult, "Hello, Ada!", "token:c1-agent"},
		{"no token", nil, wire.StatusRefusedToken, "token:required", "nats:c1"},
		{"a malformed token", []wire.InvokeOption{wire.WithToken("garbage")}, wire.StatusRefusedToken, "token:malformed", "nats:c1"},
		{"a revoked token", []wire.InvokeOption{wire.WithToken(revoked.Token)}, wire.StatusRefusedToken, "token:revoked", "token:c1-agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			called, err := busCall(t, c1, "c1", "GREET", "Ada", c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if called.Status != c.status || called.Result != c.result || called.Actor != c.actor {
				t.Fatalf("reply = %+v; want %s %q by %s", called, c.status, c.result, c.actor)
			}
			published, err := wire.Invoke(context.Background(), c1.nc, "c1", "GREET", "Ada", c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if published.Status != called.Status || published.Result != called.Result || published.Actor != called.Actor ||
				published.Fingerprints != called.Fingerprints {
				t.Fatalf("a call's receipt %+v differs from a published request's %+v", called, published)
			}
			if err := nodetest.CatchUp(context.Background(), g.n); err != nil {
				t.Fatal(err)
			}
			callLog, _ := logOf(t, g.n, called.InvocationID)
			pubLog, _ := logOf(t, g.n, published.InvocationID)
			want := []string{wire.TypeInvocationRequested + " " + wire.BusRequestSubject("c1", "GREET"), wire.TypeReceipt + " " + wire.ReceiptSubject("GREET")}
			if strings.Join(callLog, ",") != strings.Join(want, ",") || strings.Join(pubLog, ",") != strings.Join(want, ",") {
				t.Fatalf("the log holds %q for the call and %q for the published request; want %q for both", callLog, pubLog, want)
			}
		})
	}
	// The request stored is the event the client sent.
	_, ev, req, err := wire.NewBusRequest("c1", "GREET", "Grace", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Token = tok
	ev, err = wire.NewEvent(ev.At, wire.TypeInvocationRequested, ev.Actor, req)
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := wire.Encode(&ev)
	reply := rawCall(t, c1, wire.CallSubject("c1", "GREET"), sent)
	if reply.Type != wire.TypeReceipt {
		t.Fatalf("reply %+v", reply)
	}
	if err := nodetest.CatchUp(context.Background(), g.n); err != nil {
		t.Fatal(err)
	}
	if _, stored := logOf(t, g.n, req.InvocationID); string(stored) != string(sent) {
		t.Fatalf("the log holds the request\n%s\nthe client sent\n%s", stored, sent)
	}
}

// rawCall sends data as a call on subject and decodes the reply.
func rawCall(t *testing.T, bc *busClient, subject string, data []byte) wire.Event {
	t.Helper()
	m, err := bc.nc.Request(subject, data, 20*time.Second)
	if err != nil {
		t.Fatalf("call on %s: %v", subject, err)
	}
	ev, err := wire.Decode(m.Data)
	if err != nil {
		t.Fatalf("reply %s: %v", m.Data, err)
	}
	return ev
}

// What no worker would run is refused at once with a literal saying why, and
// nothing of it reaches the log: bytes that are not an event, an event that is
// not a request (a forged receipt, a directory mutation), a request for another
// key than its subject's, a malformed invocation or event id, a call too large
// for the log. A body over the payload ceiling but within what the log takes is
// the gate's, as for a published request: a refusal receipt.
func TestBusCallRefusesAtOnce(t *testing.T) {
	g := startGuardedNode(t)
	c1 := g.connect(t, "c1")
	request := func(mutate func(*wire.InvocationRequest, *wire.Event)) []byte {
		req := wire.InvocationRequest{Key: "GREET", Body: "Ada", Credential: wire.ClientActor("c1")}
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		mutate(&req, &ev)
		if ev.Data, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ev)
		return b
	}
	before := stateOf(t, g.n)
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"not JSON", "bad_request: not an event envelope", []byte("junk")},
		{"an empty payload", "bad_request: not an event envelope", nil},
		{"a forged receipt", `bad_request: event type "RECEIPT" on a request subject`,
			envelope(t, wire.TypeReceipt, "engine:forged", wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_forged", Key: "GREET", Status: wire.StatusProvenMaterialResult, OK: true}})},
		{"a directory mutation", `bad_request: event type "DIRECTORY_MUTATE" on a request subject`,
			envelope(t, wire.TypeDirectoryMutate, wire.OwnerActor, map[string]any{"action": "create", "key": "EVIL", "row": map[string]any{"key": "EVIL", "type": "fn", "target": "echo"}})},
		{"another key", `bad_request: key "EVIL" does not match subject capdir.data.bus.c1.GREET`,
			request(func(r *wire.InvocationRequest, _ *wire.Event) { r.Key = "EVIL" })},
		{"a malformed invocation id", "bad_request: wire: bad invocation id",
			request(func(r *wire.InvocationRequest, _ *wire.Event) { r.InvocationID = "inv_no.dots" })},
		{"a malformed event id", "bad_request: event id",
			request(func(_ *wire.InvocationRequest, ev *wire.Event) { ev.ID = "../x" })},
		{"too large for the log", "payload_too_large: the request is",
			request(func(r *wire.InvocationRequest, _ *wire.Event) { r.Body = strings.Repeat("a", 2<<20) })},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply := rawCall(t, c1, wire.CallSubject("c1", "GREET"), c.data)
			var r wire.CallRefused
			if reply.Type != wire.TypeCallRefused || reply.DataAs(&r) != nil || !strings.HasPrefix(r.Error, c.want) || r.Retry {
				t.Fatalf("reply %s %s; want %s starting %q", reply.Type, reply.Data, wire.TypeCallRefused, c.want)
			}
		})
	}
	if after := stateOf(t, g.n); after != before {
		t.Fatalf("refused calls changed the log or the projection:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, err := busCall(t, c1, "c1", "GREET", string(make([]byte, 10))+"\x00"); err != nil {
		t.Fatal(err) // a body the gate reads is not refused at the door
	}
	_, err := busCall(t, c1, "c1", "GREET", strings.Repeat("a", 2<<20))
	if !errors.Is(err, wire.ErrCallRefused) || !strings.Contains(err.Error(), "payload_too_large") {
		t.Fatalf("wire.Call too large for the log: %v", err)
	}
	rc, err := busCall(t, c1, "c1", "GREET", strings.Repeat("a", 1<<20+1), wire.WithToken(busToken(t, g.n, "c1-agent", "GREET")))
	if err != nil || rc.Status != wire.StatusRefusedPayloadTooLarge {
		t.Fatalf("a body over the payload ceiling: %+v, %v; want the gate's %s", rc.ReceiptSummary, err, wire.StatusRefusedPayloadTooLarge)
	}
}

// A call under a chosen invocation id runs once however often it is sent, by a
// call or by a published request: every copy of the same request gets the first
// receipt, inside the duplicate window and after it; another request under the
// id is refused; another client under it makes its own call, never this one's.
func TestBusCallIsIdempotent(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	c1, c2 := w.g.connect(t, "c1"), w.g.connect(t, "c2")
	tok := wire.WithToken(busToken(t, n, "c1-agent", "IDEM"))
	id := wire.NewInvocationID(time.Now())
	first, err := busCall(t, c1, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
	if err != nil || !first.OK || first.InvocationID != id || w.up.Hits() != 1 {
		t.Fatalf("first call: %+v, %v, %d hits", first, err, w.up.Hits())
	}
	same := func(what string, rc wire.Receipt, err error) {
		t.Helper()
		if err != nil || rc.InvocationID != id || rc.Trace != first.Trace || rc.Result != first.Result || rc.Status != first.Status {
			t.Fatalf("%s: %+v, %v; want the first receipt %+v", what, rc.ReceiptSummary, err, first.ReceiptSummary)
		}
		if h := w.up.Hits(); h != 1 {
			t.Fatalf("%s: the upstream was called %d times", what, h)
		}
	}
	rc, err := busCall(t, c1, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
	same("called again at once", rc, err)
	rc, err = wire.Invoke(context.Background(), c1.nc, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
	same("published again", rc, err)
	pastWindow()
	rc, err = busCall(t, c1, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
	same("called again after the duplicate window", rc, err)

	if _, err := busCall(t, c1, "c1", "IDEM", "y", tok, wire.WithInvocationID(id)); !errors.Is(err, wire.ErrInvocationIDReused) {
		t.Fatalf("another body under the same id: %v, want ErrInvocationIDReused", err)
	}
	if _, err := busCall(t, c1, "c1", "IDEM", "x", wire.WithInvocationID(id)); !errors.Is(err, wire.ErrRepeatRefused) || !strings.Contains(err.Error(), "token:required") {
		t.Fatalf("the same request without its token: %v, want ErrRepeatRefused token:required", err)
	}

	// c2 under c1's id: its own call, under the id scoped to it, never c1's.
	c2tok := wire.WithToken(busToken(t, n, "c2-agent", "IDEM"))
	rc, err = busCall(t, c2, "c2", "IDEM", "x", c2tok, wire.WithInvocationID(id))
	if err != nil || rc.InvocationID != wire.ScopedInvocationID("c2", id) || rc.Trace == first.Trace || rc.Result == first.Result || w.up.Hits() != 2 {
		t.Fatalf("c2 under c1's id: %+v %s, %v; want its own receipt", rc.ReceiptSummary, rc.Result, err)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	if _, rcs := logCounts(t, n); rcs != 2 {
		t.Fatalf("the log holds %d receipts, want 2", rcs)
	}
}

// A call that outlasts its caller's deadline runs on; the caller, sending it
// again under the same id, gets its receipt, and the log holds one.
func TestBusCallPastItsDeadlineIsSentAgainForItsReceipt(t *testing.T) {
	w := newIdemWorld(t, idemWindow, true)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	tok := wire.WithToken(busToken(t, n, "c1-agent", "IDEM"))
	id := wire.NewInvocationID(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	var partial wire.Receipt
	go func() {
		var err error
		partial, err = wire.Call(ctx, c1.nc, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
		res <- err
	}()
	<-w.up.Arrived()
	cancel()
	err := <-res
	if !errors.Is(err, context.Canceled) || partial.InvocationID != id || !strings.Contains(err.Error(), "WithInvocationID") {
		t.Fatalf("the call cut by its caller: %+v, %v", partial.ReceiptSummary, err)
	}
	again := make(chan wire.Receipt, 1)
	go func() {
		rc, err := busCall(t, c1, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
		if err != nil {
			t.Error(err)
		}
		again <- rc
	}()
	w.up.Release()
	rc := <-again
	if rc.InvocationID != id || !rc.OK || w.up.Hits() != 1 {
		t.Fatalf("sent again: %+v, %d hits", rc.ReceiptSummary, w.up.Hits())
	}
	if rcs := nodetest.Receipts(t, n.Log(), id); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}

// A node stopped in the middle of a call (its drain cut short: the call gets no
// receipt and no reply) runs it again when it starts again; the caller, sending
// it again under the same id, gets the one receipt the log holds.
func TestBusCallCutByANodeStopLeavesOneReceipt(t *testing.T) {
	up := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "released"))
	dir := t.TempDir()
	seeds := map[string]string{}
	cfg := func(c *capdir.Config) {
		drainConfig(dir)(c)
		c.Log.Listen = "127.0.0.1:0"
		if seeds["c1"] == "" {
			seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
		}
	}
	first := nodetest.Start(t, cfg)
	const key = "CUT"
	addHTTPRow(t, first, key, "GET "+up.URL+"/cut", "")
	c1 := (&guardedNode{n: first, seeds: seeds}).connect(t, "c1")
	tok := wire.WithToken(busToken(t, first, "c1-agent", key))
	id := wire.NewInvocationID(time.Now())
	res := make(chan error, 1)
	cctx, ccancel := context.WithCancel(context.Background())
	go func() {
		_, err := wire.Call(cctx, c1.nc, "c1", key, "x", tok, wire.WithInvocationID(id))
		res <- err
	}()
	<-up.Arrived()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	first.Stop(ctx) // cut short: the call is cancelled, its request handed back
	ccancel()       // the caller gives up on the stopped node
	if err := <-res; err == nil {
		t.Fatal("a call cut by its node's stop got a reply")
	}
	<-up.Left()
	up.Release()

	second := nodetest.Start(t, cfg)
	c1 = (&guardedNode{n: second, seeds: seeds}).connect(t, "c1")
	rc, err := busCall(t, c1, "c1", key, "x", tok, wire.WithInvocationID(id))
	if err != nil || rc.InvocationID != id || rc.Result != "HTTP 200:released" {
		t.Fatalf("sent again after the restart: %+v %q, %v", rc.ReceiptSummary, rc.Result, err)
	}
	nodetest.WaitDispatchIdle(t, second.Log())
	if rcs := nodetest.Receipts(t, second.Log(), id); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
	if h := up.Hits(); h != 2 {
		t.Fatalf("the upstream was called %d times, want the cut call and its rerun", h)
	}
}
