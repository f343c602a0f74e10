package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// Calls that run once: the same Idempotency-Key (HTTP) or the same chosen
// invocation id (bus) sent again, inside the log's duplicate window and after it,
// runs the upstream once and answers every copy with the same receipt.

// idemWindow is the log's duplicate window in these tests: short, so that a
// request sent again "outside the window" costs a moment, not two minutes.
const idemWindow = 300 * time.Millisecond

// idemWorld is a node (NATS listening on loopback, bus clients c1 and c2) with a
// row IDEM that calls a local upstream counting its hits; each answer names the
// hit, so an answer given twice shows it was not run twice. A gated world's
// upstream holds every call until up.Release.
type idemWorld struct {
	g  *guardedNode
	up *upstreamtest.Upstream
}

func newIdemWorld(t *testing.T, window time.Duration, gated bool) *idemWorld {
	t.Helper()
	w := &idemWorld{g: &guardedNode{seeds: map[string]string{}}}
	answer := func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, `{"hit":%d,"q":%q}`, upstreamtest.Hit(r), r.URL.Query().Get("q"))
	}
	if gated {
		w.up = upstreamtest.StartGated(t, answer)
	} else {
		w.up = upstreamtest.Start(t, answer)
	}
	up := w.up
	w.g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		c.Log.DuplicateWindow = window
		c.HTTPRunner.Timeout = 5 * time.Second
		w.g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
		w.g.seeds["c2"] = addBusIdentity(t, c.Log.DataDir, "c2", eventlog.RoleClient)
	})
	row := map[string]any{
		"key": "IDEM", "type": "http", "target": "GET " + up.URL + "/v1/thing?q=$1", "category": "tools",
		"content": "# WHAT: Fetch one thing from a local upstream that counts its calls.\n# ARGS: $1=query\n# EX: [IDEM]x[/IDEM]\n# OUTPUT: JSON",
	}
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, w.g.n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	return w
}

// idemAnswer is the part of a dispatch answer that must be the same for every copy.
type idemAnswer struct {
	OK     bool   `json:"ok"`
	Trace  string `json:"trace"`
	Result string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

// dispatch POSTs body to /api/dispatch with the Idempotency-Key key (none when
// empty) and the given credential headers, and decodes a 200.
func (w *idemWorld) dispatch(t *testing.T, key, body string, cred map[string]string) idemAnswer {
	t.Helper()
	code, resp := w.post(t, key, body, cred)
	if code != 200 {
		t.Fatalf("dispatch: %d %s", code, resp)
	}
	var a idemAnswer
	if err := json.Unmarshal([]byte(resp), &a); err != nil || a.Proof.InvocationID == "" {
		t.Fatalf("dispatch answer %s: %v", resp, err)
	}
	return a
}

func (w *idemWorld) post(t *testing.T, key, body string, cred map[string]string) (int, string) {
	t.Helper()
	h := map[string]string{}
	for k, v := range cred {
		h[k] = v
	}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return nodetest.DoHeaders(t, w.g.n, "POST", "/api/dispatch", body, h)
}

// logCounts reads the whole data stream: how many requests and receipts it holds,
// and it fails the test if an invocation id has more than one receipt.
func logCounts(t *testing.T, n *capdir.Node) (requests, receipts int) {
	t.Helper()
	per := map[string]int{}
	err := n.Log().Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		switch s.Type {
		case wire.TypeInvocationRequested:
			requests++
		case wire.TypeReceipt:
			var rc wire.Receipt
			if err := s.DataAs(&rc); err != nil {
				return err
			}
			receipts++
			per[rc.InvocationID]++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the data stream: %v", err)
	}
	for inv, k := range per {
		if k != 1 {
			t.Errorf("invocation %s has %d receipts in the log, want 1", inv, k)
		}
	}
	return requests, receipts
}

// pastWindow waits until the log's duplicate window has passed since now: the
// window is a duration of JetStream's, with no event to wait on.
func pastWindow() { time.Sleep(idemWindow + 200*time.Millisecond) }

func TestIdempotencyKeyRunsOnceInsideAndOutsideTheWindow(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	first := w.dispatch(t, "order-42", `{"key":"IDEM","body":"x"}`, nil)
	if !first.OK || w.up.Hits() != 1 || !strings.Contains(first.Result, `"hit":1`) {
		t.Fatalf("first call: %+v, %d hits", first, w.up.Hits())
	}
	reqs, rcs := logCounts(t, n)
	same := func(what string, got idemAnswer) {
		t.Helper()
		if got != first {
			t.Fatalf("%s: answer %+v, want the first's %+v", what, got, first)
		}
		if h := w.up.Hits(); h != 1 {
			t.Fatalf("%s: the upstream was called %d times, want once", what, h)
		}
		if r, c := logCounts(t, n); r != reqs || c != rcs {
			t.Fatalf("%s: the log went from %d requests and %d receipts to %d and %d", what, reqs, rcs, r, c)
		}
	}
	same("sent again at once", w.dispatch(t, "order-42", `{"key":"IDEM","body":"x"}`, nil))
	code, resp := nodetest.DoHeaders(t, n, "GET", "/api/dispatch?key=IDEM&body=x", "", map[string]string{"Idempotency-Key": "order-42"})
	var viaGet idemAnswer
	if code != 200 || json.Unmarshal([]byte(resp), &viaGet) != nil {
		t.Fatalf("GET form: %d %s", code, resp)
	}
	same("sent again in the GET form", viaGet)
	pastWindow()
	same("sent again after the duplicate window", w.dispatch(t, "order-42", `{"key":"IDEM","body":"x"}`, nil))

	// The key used for another request: refused, nothing appended, nothing run.
	for _, body := range []string{`{"key":"IDEM","body":"y"}`, `{"key":"IDEM","body":"x","shape":true}`, `{"key":"OTHER","body":"x"}`} {
		code, resp := w.post(t, "order-42", body, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(resp, `"error":"idempotency_key_reused"`) || !strings.Contains(resp, "already used for another request") {
			t.Fatalf("%s under a used key: %d %s, want 422 idempotency_key_reused", body, code, resp)
		}
	}
	same("after the refusals", w.dispatch(t, "order-42", `{"key":"IDEM","body":"x"}`, nil))

	// A key that is not 1 to 255 visible ASCII characters: 400, saying so.
	for _, bad := range []string{"has space", strings.Repeat("k", 256), "caf\u00e9", "tab\tkey"} {
		code, resp := w.post(t, bad, `{"key":"IDEM","body":"x"}`, nil)
		if code != http.StatusBadRequest || !strings.Contains(resp, "1 to 255 visible ASCII characters") {
			t.Fatalf("Idempotency-Key %q: %d %s, want 400 naming what is allowed", bad, code, resp)
		}
	}
	same("after the bad keys", first)
}

// Two callers sending the same Idempotency-Key get two calls: the key is the
// caller's own.
func TestIdempotencyKeyIsPerCaller(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	tok := busToken(t, w.g.n, "agent-1", "IDEM")
	owner := w.dispatch(t, "k1", `{"key":"IDEM","body":"x"}`, nil)
	holder := w.dispatch(t, "k1", `{"key":"IDEM","body":"x"}`, map[string]string{"Authorization": "Bearer " + tok})
	again := w.dispatch(t, "k1", `{"key":"IDEM","body":"x"}`, map[string]string{"Authorization": "Bearer " + tok})
	if owner.Proof.InvocationID == holder.Proof.InvocationID || again != holder || w.up.Hits() != 2 {
		t.Fatalf("owner %+v, token holder %+v then %+v, %d hits: want two calls, the holder's answered twice", owner, holder, again, w.up.Hits())
	}
	// Another body under the holder's key is refused; the owner's key is untouched.
	if code, resp := w.post(t, "k1", `{"key":"IDEM","body":"y"}`, map[string]string{"Authorization": "Bearer " + tok}); code != 422 {
		t.Fatalf("token holder reusing its key: %d %s", code, resp)
	}
	logCounts(t, w.g.n)
}

// Copies sent at once run once; every copy gets the receipt.
func TestIdempotencyKeyConcurrentCopiesRunOnce(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	const copies = 8
	answers := make([]idemAnswer, copies)
	var sent, done sync.WaitGroup
	sent.Add(copies)
	done.Add(copies)
	for i := range copies {
		go func() {
			defer done.Done()
			sent.Done()
			code, resp := w.post(t, "same", `{"key":"IDEM","body":"x"}`, nil)
			if code != 200 || json.Unmarshal([]byte(resp), &answers[i]) != nil {
				t.Errorf("copy %d: %d %s", i, code, resp)
			}
		}()
	}
	sent.Wait()
	<-w.up.Arrived() // the call is in the upstream: hold it while copies arrive
	time.Sleep(100 * time.Millisecond)
	w.up.Release()
	done.Wait()
	for i := range answers {
		if answers[i] != answers[0] || !answers[i].OK {
			t.Fatalf("copy %d answered %+v, copy 0 %+v", i, answers[i], answers[0])
		}
	}
	if h := w.up.Hits(); h != 1 {
		t.Fatalf("%d copies sent at once called the upstream %d times, want once", copies, h)
	}
	if reqs, rcs := logCounts(t, w.g.n); reqs != 1 || rcs != 1 {
		t.Fatalf("the log holds %d requests and %d receipts, want one of each", reqs, rcs)
	}
}

// The worker, not only the facade, refuses to run a request repeating an earlier
// one: a copy appended outside the duplicate window past the facade (a node whose
// projection lagged) is not run and gets no second receipt.
func TestWorkerDoesNotRunARepeatedRequest(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	first := w.dispatch(t, "order-7", `{"key":"IDEM","body":"x"}`, nil)
	pastWindow()
	req := wire.InvocationRequest{InvocationID: first.Proof.InvocationID, Key: "IDEM", Body: "x", Credential: wire.OwnerActor}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Log().Append(context.Background(), wire.RequestSubject("IDEM"), ev); err != nil {
		t.Fatal(err)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	if h := w.up.Hits(); h != 1 {
		t.Fatalf("a repeated request ran: %d upstream calls", h)
	}
	if reqs, rcs := logCounts(t, n); reqs != 2 || rcs != 1 {
		t.Fatalf("the log holds %d requests and %d receipts, want 2 and 1", reqs, rcs)
	}
}

// A bus client's chosen invocation id: the same request sent again, inside the
// duplicate window and after it, runs once and the client gets the same receipt
// each time; another request under it is refused; another client using it
// makes its own call, under the id scoped to it, and is told nothing of the
// first client's.
func TestBusChosenInvocationIDRunsOnce(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	c1, c2 := w.g.connect(t, "c1"), w.g.connect(t, "c2")
	tok := wire.WithToken(busToken(t, n, "c1-agent", "IDEM"))
	id := wire.NewInvocationID(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
	if err != nil || !first.OK || first.InvocationID != id || w.up.Hits() != 1 {
		t.Fatalf("first call: %+v, %v, %d hits", first, err, w.up.Hits())
	}
	reqs, _ := logCounts(t, n)
	again := func(what string) {
		t.Helper()
		rc, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", tok, wire.WithInvocationID(id))
		if err != nil || rc.InvocationID != first.InvocationID || rc.Trace != first.Trace || rc.Result != first.Result || rc.Status != first.Status {
			t.Fatalf("%s: %+v, %v; want the first receipt %+v", what, rc, err, first.ReceiptSummary)
		}
		if h := w.up.Hits(); h != 1 {
			t.Fatalf("%s: the upstream was called %d times", what, h)
		}
	}
	again("sent again at once")
	pastWindow()
	again("sent again after the duplicate window")

	if _, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "y", tok, wire.WithInvocationID(id)); !errors.Is(err, wire.ErrInvocationIDReused) {
		t.Fatalf("another body under the same id: %v, want ErrInvocationIDReused", err)
	}
	if _, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", tok, wire.WithInvocationID("inv_no.dots")); !errors.Is(err, wire.ErrBadOption) || !strings.Contains(err.Error(), "A-Z, a-z, 0-9") {
		t.Fatalf("a malformed id: %v, want ErrBadOption saying what an id holds", err)
	}

	// c2 under c1's id: its own call, under the id scoped to it, told nothing
	// of c1's.
	c2tok := wire.WithToken(busToken(t, n, "c2-agent", "IDEM"))
	rc, err := wire.Invoke(ctx, c2.nc, "c2", "IDEM", "x", c2tok, wire.WithInvocationID(id))
	if err != nil || rc.InvocationID != wire.ScopedInvocationID("c2", id) || rc.Trace == first.Trace || rc.Result == first.Result || w.up.Hits() != 2 {
		t.Fatalf("c2 under c1's id: %+v %s, %v; want its own receipt", rc.ReceiptSummary, rc.Result, err)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	if r, rcs := logCounts(t, n); r != reqs+4 || rcs != 2 { // c1's two copies and its refused body, then c2's
		t.Fatalf("the log holds %d requests and %d receipts, want %d and 2", r, rcs, reqs+4)
	}
}

// A copy appended while the first call still runs (no receipt yet to find) is
// not run either: the worker sees the earlier request under the same id.
func TestWorkerDoesNotRunACopyOfARunningCall(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	n := w.g.n
	answer := make(chan idemAnswer, 1)
	go func() {
		code, resp := w.post(t, "slow", `{"key":"IDEM","body":"x"}`, nil)
		var a idemAnswer
		if code != 200 || json.Unmarshal([]byte(resp), &a) != nil {
			t.Errorf("first call: %d %s", code, resp)
		}
		answer <- a
	}()
	<-w.up.Arrived()
	var inv string
	n.Log().Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var r wire.InvocationRequest
		if s.Type == wire.TypeInvocationRequested && s.DataAs(&r) == nil {
			inv = r.InvocationID
		}
		return nil
	})
	req := wire.InvocationRequest{InvocationID: inv, Key: "IDEM", Body: "x", Credential: wire.OwnerActor}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Log().Append(context.Background(), wire.RequestSubject("IDEM"), ev); err != nil {
		t.Fatal(err)
	}
	// Wait until the copy is handled: only the first call is still held.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := n.Log().JetStream().Consumer(ctx, wire.DataStream, "capdir-dispatch")
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumPending == 0 && info.NumAckPending == 1 || w.up.Hits() > 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.up.Release()
	a := <-answer
	nodetest.WaitDispatchIdle(t, n.Log())
	if h := w.up.Hits(); h != 1 || a.Proof.InvocationID != inv {
		t.Fatalf("a copy of a running call: %d upstream calls, answer %+v", h, a)
	}
	if reqs, rcs := logCounts(t, n); reqs != 2 || rcs != 1 {
		t.Fatalf("the log holds %d requests and %d receipts, want 2 and 1", reqs, rcs)
	}
}
