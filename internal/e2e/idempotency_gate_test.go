package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// A request sent again under its Idempotency-Key, or a bus client's chosen
// invocation id, is answered with the first call's receipt only when the token
// presented now would let its holder make the call: a revoked token, a key out of
// its scope or a pin the row no longer matches gets the refusal a fresh call
// gets, and nothing is appended. The key stays the subject's: a refreshed token
// of the same subject and scope gets the one call.

func bearerHeader(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func TestRepeatedRequestPassesTheGateForTheTokenPresentedNow(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	tokRow(t, n, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	pinned := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"pin":"current","ttl_seconds":600}`)
	first := w.dispatch(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(a.Token))
	if !first.OK || w.up.Hits() != 1 {
		t.Fatalf("first call: %+v, %d hits", first, w.up.Hits())
	}
	reqs, rcs := logCounts(t, n)
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+a.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	refused := func(what string, code int, resp string, wantCode int, literal string) {
		t.Helper()
		if code != wantCode || !strings.Contains(resp, `"error":"`+literal+`"`) || strings.Contains(resp, `"hit"`) {
			t.Fatalf("%s: %d %s; want %d %s and nothing of the first call", what, code, resp, wantCode, literal)
		}
		if r, c := logCounts(t, n); r != reqs || c != rcs || w.up.Hits() != 1 {
			t.Fatalf("%s: the log went from %d requests and %d receipts to %d and %d, %d hits", what, reqs, rcs, r, c, w.up.Hits())
		}
	}
	code, resp := w.post(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(a.Token))
	refused("the revoked token", code, resp, 401, "token:revoked")

	// Another token of the same subject whose scope does not hold IDEM: the
	// refusal a fresh call of it gets (403 scope:IDEM), over POST and GET.
	b := mint(t, n, `{"sub":"agent-7","scope":{"keys":["ECHO"]},"ttl_seconds":600}`)
	code, resp = w.post(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(b.Token))
	refused("a token of the subject without IDEM in scope", code, resp, 403, "scope:IDEM")
	code, resp = nodetest.DoHeaders(t, n, "GET", "/api/dispatch?key=IDEM&body=x", "",
		map[string]string{"Authorization": "Bearer " + b.Token, "Idempotency-Key": "k"})
	refused("the GET form with that token", code, resp, 403, "scope:IDEM")
	code, resp = nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+first.Proof.InvocationID, "", b.Token)
	refused("that token's look at the subject's call (?receipt=)", code, resp, 403, "scope:IDEM")
	fresh, freshResp := w.post(t, "fresh", `{"key":"IDEM","body":"x"}`, bearerHeader(b.Token))
	if fresh != 403 || !strings.Contains(freshResp, `"error":"scope:IDEM"`) {
		t.Fatalf("a fresh call with that token: %d %s", fresh, freshResp)
	}
	reqs, rcs = logCounts(t, n)

	// A token pinned to the contract IDEM had: refused once the row changes.
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/IDEM", `{"content":"# WHAT: Fetch one thing, counted.\n# ARGS: $1=query\n# EX: [IDEM]x[/IDEM]"}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	code, resp = w.post(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(pinned.Token))
	if code != 409 || !strings.Contains(resp, `"error":"contract_changed:`) || strings.Contains(resp, `"hit"`) {
		t.Fatalf("a token pinned to the old contract: %d %s", code, resp)
	}

	// A refreshed token of the same subject and scope: the one call, run once.
	refreshed := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	if again := w.dispatch(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(refreshed.Token)); again != first || w.up.Hits() != 1 {
		t.Fatalf("the refreshed token: %+v, %d hits; want the first call %+v, run once", again, w.up.Hits(), first)
	}
	if r, c := logCounts(t, n); r != reqs || c != rcs {
		t.Fatalf("the log went from %d requests and %d receipts to %d and %d", reqs, rcs, r, c)
	}
	if code, resp := nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+first.Proof.InvocationID, "", refreshed.Token); code != 200 || !strings.Contains(resp, `\"hit\":1`) {
		t.Fatalf("the refreshed token's look at its subject's call: %d %s", code, resp)
	}
}

// The bus: a client sending its request again under its chosen invocation id
// with a token that no longer permits the call gets the gate's refusal
// (wire.ErrRepeatRefused, the status and literal a fresh call's receipt would
// carry), not the first receipt; with a token that does, the first receipt.
func TestBusRepeatPassesTheGateForTheTokenSentNow(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	id := wire.NewInvocationID(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
	if err != nil || !first.OK || w.up.Hits() != 1 {
		t.Fatalf("first call: %+v, %v", first, err)
	}
	rc, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken(busToken(t, n, "agent-7", "ECHO")), wire.WithInvocationID(id))
	if !errors.Is(err, wire.ErrRepeatRefused) || rc.Status != wire.StatusRefusedScope || rc.Result != "scope:IDEM" || rc.InvocationID != id {
		t.Fatalf("sent again with a token without IDEM in scope: %+v, %v; want ErrRepeatRefused, REFUSED_SCOPE scope:IDEM", rc, err)
	}
	rc, err = wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", wire.WithInvocationID(id))
	if !errors.Is(err, wire.ErrRepeatRefused) || rc.Status != wire.StatusRefusedToken || rc.Result != "token:required" {
		t.Fatalf("sent again without a token: %+v, %v; want ErrRepeatRefused, REFUSED_TOKEN token:required", rc, err)
	}
	rc, err = wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken("not.a.token"), wire.WithInvocationID(id))
	if !errors.Is(err, wire.ErrRepeatRefused) || rc.Status != wire.StatusRefusedToken || !strings.HasPrefix(rc.Result, "token:") {
		t.Fatalf("sent again with a malformed token: %+v, %v; want ErrRepeatRefused, REFUSED_TOKEN", rc, err)
	}
	rc, err = wire.Invoke(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
	if err != nil || rc.Result != first.Result || rc.Trace != first.Trace || w.up.Hits() != 1 {
		t.Fatalf("sent again with a token that permits it: %+v, %v, %d hits", rc, err, w.up.Hits())
	}
	if _, rcs := logCounts(t, n); rcs != 1 {
		t.Fatalf("the log holds %d receipts, want 1", rcs)
	}
}

// An approved call to a sensitive row, held and then run for a token of risk
// high, is not a low token's to read by sending its request again: neither
// while it waits nor once it ran.
func TestRepeatOfASensitiveCallNeedsTheRiskCeiling(t *testing.T) {
	w := newWatchWorld(t)
	key := map[string]string{"Authorization": "Bearer " + w.tok, "Idempotency-Key": "pay-1"}
	code, out := nodetest.DoHeaders(t, w.n, "POST", "/api/dispatch", `{"key":"PAY","body":"10"}`, key)
	var h heldAnswer
	if code != 202 || json.Unmarshal([]byte(out), &h) != nil || !h.Pending {
		t.Fatalf("the high token's call: %d %s", code, out)
	}
	low := mint(t, w.n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"ttl_seconds":3600}`).Token
	repeat := func(what string) {
		t.Helper()
		code, out := nodetest.DoHeaders(t, w.n, "POST", "/api/dispatch", `{"key":"PAY","body":"10"}`,
			map[string]string{"Authorization": "Bearer " + low, "Idempotency-Key": "pay-1"})
		if code != 403 || !strings.Contains(out, `"error":"risk_ceiling:low<row:high"`) || strings.Contains(out, "paid") || strings.Contains(out, h.InvocationID) {
			t.Fatalf("%s, the low token's repeat: %d %s; want 403 risk_ceiling:low<row:high", what, code, out)
		}
		code, out = nodetest.DoToken(t, w.n, "GET", "/api/dispatch?receipt="+h.InvocationID, "", low)
		if code != 403 || !strings.Contains(out, `"error":"risk_ceiling:low<row:high"`) || strings.Contains(out, "paid") || strings.Contains(out, h.Trace) {
			t.Fatalf("%s, the low token's look at the call (?receipt=): %d %s; want 403 risk_ceiling:low<row:high", what, code, out)
		}
	}
	repeat("held")
	if code, ans := w.decide(t, h.InvocationID, "approve"); code != 200 || ans["status"] != wire.StatusProvenMaterialResult {
		t.Fatalf("approve: %d %v", code, ans)
	}
	repeat("approved and run")
	code, out = nodetest.DoHeaders(t, w.n, "POST", "/api/dispatch", `{"key":"PAY","body":"10"}`, key)
	if code != 200 || !strings.Contains(out, "paid") || !strings.Contains(out, h.InvocationID) || len(w.up.Bodies()) != 1 {
		t.Fatalf("the high token's repeat: %d %s, %d upstream calls", code, out, len(w.up.Bodies()))
	}
}

// The bus: the very bytes of a call sent again inside the log's duplicate window
// (the log holds them already and says so) pass the gate for the token they carry
// now, as a repeat under a chosen id does: once that token is revoked, the copy
// gets the refusal a fresh call would, not the first call's receipt. Both with
// the invocation id derived from the event's and with one the client chose;
// under a chosen id, an envelope under the same event id with another body is
// not the first call either.
func TestBusCallSentAgainVerbatimPassesTheGateForItsTokenNow(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	for _, chosen := range []bool{false, true} {
		a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
		_, base, req, err := wire.NewBusRequest("c1", "IDEM", "x", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if chosen {
			req.InvocationID = "inv_verbatim-" + strings.ToLower(base.ID[len(base.ID)-8:])
		}
		req.Token = a.Token
		envelope := func(body string) []byte {
			t.Helper()
			r := req
			r.Body = body
			ev, err := wire.NewEventWithID(base.ID, base.At, wire.TypeInvocationRequested, base.Actor, r)
			if err != nil {
				t.Fatal(err)
			}
			b, err := wire.Encode(&ev)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		sent := envelope("x")
		hits := w.up.Hits()
		if first := rawCall(t, c1, wire.CallSubject("c1", "IDEM"), sent); first.Type != wire.TypeReceipt || w.up.Hits() != hits+1 {
			t.Fatalf("chosen id %v: first call: %+v, %d hits", chosen, first, w.up.Hits()-hits)
		}
		if again := rawCall(t, c1, wire.CallSubject("c1", "IDEM"), sent); again.Type != wire.TypeReceipt || w.up.Hits() != hits+1 {
			t.Fatalf("chosen id %v: the same bytes again, the token valid: %+v, %d hits; want the first receipt", chosen, again, w.up.Hits()-hits)
		}
		reqs, rcs := logCounts(t, n)
		refused := func(what string, got wire.Event, status, literal string) {
			t.Helper()
			var r wire.InvocationRefused
			if got.Type != wire.TypeInvocationRefused || got.DataAs(&r) != nil || r.Status != status || !strings.HasPrefix(r.Error, literal) {
				t.Fatalf("chosen id %v: %s: %s %s; want %s %s", chosen, what, got.Type, got.Data, status, literal)
			}
			if strings.Contains(string(got.Data), `hit`) {
				t.Fatalf("chosen id %v: %s: the answer holds the first call's result: %s", chosen, what, got.Data)
			}
			if r, c := logCounts(t, n); r != reqs || c != rcs || w.up.Hits() != hits+1 {
				t.Fatalf("chosen id %v: %s: the log went from %d requests and %d receipts to %d and %d, %d hits", chosen, what, reqs, rcs, r, c, w.up.Hits()-hits)
			}
		}
		if chosen {
			refused("another body under the same event id", rawCall(t, c1, wire.CallSubject("c1", "IDEM"), envelope("y")),
				"", "invocation id ")
		}
		if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+a.JTI, ""); code != 200 {
			t.Fatalf("revoke: %d %s", code, body)
		}
		refused("the same bytes again once their token is revoked", rawCall(t, c1, wire.CallSubject("c1", "IDEM"), sent),
			wire.StatusRefusedToken, "token:revoked")
	}
}

// The same, while the first call still runs: a copy of its bytes sent then
// waits for the first call's receipt, and is given it only if its token permits
// the call when the receipt comes; revoked meanwhile, the copy gets the
// refusal, and the first call its receipt.
func TestBusCallSentAgainVerbatimWhileItRunsPassesTheGate(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	_, ev, req, err := wire.NewBusRequest("c1", "IDEM", "x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Token = a.Token
	ev, err = wire.NewEventWithID(ev.ID, ev.At, wire.TypeInvocationRequested, ev.Actor, req)
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := wire.Encode(&ev)
	firstc := make(chan wire.Event, 1)
	go func() { firstc <- rawCall(t, c1, wire.CallSubject("c1", "IDEM"), sent) }()
	<-w.up.Arrived() // the first call is in the upstream
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+a.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	copyc := make(chan wire.Event, 1)
	go func() { copyc <- rawCall(t, c1, wire.CallSubject("c1", "IDEM"), sent) }()
	time.Sleep(200 * time.Millisecond) // the copy waits for the first call's receipt
	w.up.Release()
	if first := <-firstc; first.Type != wire.TypeReceipt || !strings.Contains(string(first.Data), `hit`) {
		t.Fatalf("the first call: %s %s; want its receipt", first.Type, first.Data)
	}
	got := <-copyc
	var r wire.InvocationRefused
	if got.Type != wire.TypeInvocationRefused || got.DataAs(&r) != nil || r.Status != wire.StatusRefusedToken || r.Error != "token:revoked" {
		t.Fatalf("the copy sent once the token was revoked: %s %s; want INVOCATION_REFUSED token:revoked", got.Type, got.Data)
	}
	if _, rcs := logCounts(t, n); rcs != 1 || w.up.Hits() != 1 {
		t.Fatalf("%d receipts, %d hits; want the one call", rcs, w.up.Hits())
	}
}

// A copy under an Idempotency-Key that arrives while the first call runs waits
// for its receipt, and is given it only if its token permits the call when the
// receipt comes: revoked while it waited, the copy gets the refusal.
func TestRepeatedRequestWaitingForTheFirstPassesTheGateWhenItsReceiptComes(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	n := w.g.n
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	type answer struct {
		code int
		body string
	}
	first, copied := make(chan answer, 1), make(chan answer, 1)
	go func() {
		code, body := w.post(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(a.Token))
		first <- answer{code, body}
	}()
	<-w.up.Arrived() // the first call is in the upstream
	go func() {
		code, body := w.post(t, "k", `{"key":"IDEM","body":"x"}`, bearerHeader(a.Token))
		copied <- answer{code, body}
	}()
	time.Sleep(200 * time.Millisecond) // the copy waits for the first call's receipt
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+a.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	w.up.Release()
	// The first call was admitted when it ran: its caller gets its receipt,
	// as a call without a key would, whatever became of the token since.
	if got := <-first; got.code != 200 || !strings.Contains(got.body, `"ok":true`) {
		t.Fatalf("the first call, its token revoked while it ran: %d %s; want 200 and its receipt", got.code, got.body)
	}
	if got := <-copied; got.code != 401 || !strings.Contains(got.body, `"error":"token:revoked"`) || strings.Contains(got.body, "hit") {
		t.Fatalf("the copy, its token revoked while it waited: %d %s; want 401 token:revoked and nothing of the call", got.code, got.body)
	}
	if reqs, rcs := logCounts(t, n); reqs != 1 || rcs != 1 || w.up.Hits() != 1 {
		t.Fatalf("%d requests, %d receipts, %d hits; want the one call", reqs, rcs, w.up.Hits())
	}
}

// A bus call under a chosen invocation id sent while the first call under it
// still runs waits for that call's receipt, and is given it only if its token
// permits the call when the receipt comes: revoked while it waited, it gets
// the refusal.
func TestBusCallUnderAChosenIDWaitingForTheFirstPassesTheGateWhenItsReceiptComes(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	id := wire.NewInvocationID(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type answer struct {
		rc  wire.Receipt
		err error
	}
	first, again := make(chan answer, 1), make(chan answer, 1)
	go func() {
		rc, err := wire.Call(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken(a.Token), wire.WithInvocationID(id))
		first <- answer{rc, err}
	}()
	<-w.up.Arrived() // the first call is in the upstream
	go func() {
		rc, err := wire.Call(ctx, c1.nc, "c1", "IDEM", "x", wire.WithToken(a.Token), wire.WithInvocationID(id))
		again <- answer{rc, err}
	}()
	time.Sleep(200 * time.Millisecond) // the second call waits for the first one's receipt
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+a.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	w.up.Release()
	if got := <-first; got.err != nil || !got.rc.OK {
		t.Fatalf("the first call: %+v, %v", got.rc, got.err)
	}
	got := <-again
	if !errors.Is(got.err, wire.ErrRepeatRefused) || got.rc.Status != wire.StatusRefusedToken || got.rc.Result != "token:revoked" {
		t.Fatalf("the call sent again, its token revoked while it waited: %+v, %v; want ErrRepeatRefused, REFUSED_TOKEN token:revoked", got.rc, got.err)
	}
	if _, rcs := logCounts(t, n); rcs != 1 || w.up.Hits() != 1 {
		t.Fatalf("%d receipts, %d hits; want the one call", rcs, w.up.Hits())
	}
}

// A token of the subject that could not make the subject's call learns nothing
// of its arguments by sending guesses under its Idempotency-Key: the right
// guess and a wrong one (another body, another key it may not call either) get
// the same refusal a fresh call gets, and nothing is appended. Before, a wrong
// guess was 422 idempotency_key_reused and the right one 403 scope:…, so the
// guesses confirmed the first call's key and body one by one. A request the
// token may make that is not the first one stays 422.
func TestRepeatGuessesLearnNothingOfACallOutOfScope(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	tokRow(t, n, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	tokRow(t, n, map[string]any{"key": "OTHER", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	b := mint(t, n, `{"sub":"agent-7","scope":{"keys":["ECHO"]},"ttl_seconds":600}`)
	if first := w.dispatch(t, "order-42", `{"key":"IDEM","body":"acct-1234"}`, bearerHeader(a.Token)); !first.OK || w.up.Hits() != 1 {
		t.Fatalf("first call: %+v, %d hits", first, w.up.Hits())
	}
	reqs, rcs := logCounts(t, n)
	for _, guess := range []struct{ req, literal string }{
		{`{"key":"IDEM","body":"acct-1234"}`, "scope:IDEM"}, // the call itself
		{`{"key":"IDEM","body":"acct-0000"}`, "scope:IDEM"}, // another body
		{`{"key":"IDEM","body":"acct-1234","shape":true}`, "scope:IDEM"},
		{`{"key":"OTHER","body":"acct-1234"}`, "scope:OTHER"}, // another key out of scope
	} {
		code, resp := w.post(t, "order-42", guess.req, bearerHeader(b.Token))
		if code != 403 || !strings.Contains(resp, `"error":"`+guess.literal+`"`) || strings.Contains(resp, "idempotency_key_reused") {
			t.Errorf("guess %s with a token without IDEM: %d %s; want 403 %s, as for any request it may not make", guess.req, code, resp, guess.literal)
		}
	}
	if code, resp := w.post(t, "order-42", `{"key":"ECHO","body":"x"}`, bearerHeader(b.Token)); code != 422 || !strings.Contains(resp, "idempotency_key_reused") {
		t.Errorf("a request the token may make under the subject's used key: %d %s; want 422 idempotency_key_reused", code, resp)
	}
	if r, c := logCounts(t, n); r != reqs || c != rcs || w.up.Hits() != 1 {
		t.Fatalf("the log went from %d requests and %d receipts to %d and %d, %d hits", reqs, rcs, r, c, w.up.Hits())
	}
}

// A token of the subject reading the subject's call (GET /api/dispatch?receipt=)
// whose fixed body or payload ceiling the call's arguments do not fit is answered
// as for another caller's call (404), not with the refusal a fresh call gets:
// that quotes what was sent, here another token's arguments, the first 16 hex
// digits of their SHA-256 (body_fixed:<fixed>!=<sent>) or their size
// (payload_ceiling:<size>><max>), against which its holder could test guesses.
// A token whose fixed body is the call's reads it.
func TestReadingTheSubjectsCallQuotesNoneOfItsArguments(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	a := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600}`)
	first := w.dispatch(t, "", `{"key":"IDEM","body":"acct-1234"}`, bearerHeader(a.Token))
	sum := sha256.Sum256([]byte("acct-1234"))
	quoted := []string{hex.EncodeToString(sum[:8]), "payload_ceiling:9"}
	notFound := `{"error":"not_found","invocation_id":"` + first.Proof.InvocationID + `"}`
	for _, claims := range []string{`"body":"10"`, `"max_payload":1`} {
		tok := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600,`+claims+`}`)
		code, resp := nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+first.Proof.InvocationID, "", tok.Token)
		if code != 404 || strings.TrimSpace(resp) != notFound {
			t.Errorf("a token of the subject with %s reads its call: %d %s; want 404 %s", claims, code, resp, notFound)
		}
		for _, q := range quoted {
			if strings.Contains(resp, q) {
				t.Errorf("the answer to a token with %s quotes the call's arguments (%s): %s", claims, q, resp)
			}
		}
	}
	same := mint(t, n, `{"sub":"agent-7","scope":{"keys":["IDEM"]},"ttl_seconds":600,"body":"acct-1234"}`)
	if code, resp := nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+first.Proof.InvocationID, "", same.Token); code != 200 || !strings.Contains(resp, first.Proof.InvocationID) {
		t.Errorf("a token whose fixed body is the call's reads it: %d %s", code, resp)
	}
}
