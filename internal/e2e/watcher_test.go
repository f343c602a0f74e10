package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// The watcher end to end: a real node, a sensitive http row whose upstream counts
// its calls, a token with risk high. A token holder's call waits for the owner's
// decision; each decision is an event; every outcome has exactly one receipt; the
// owner's own calls run at once. nodetest's cleanup replays the log and compares
// digests, so the approvals fold the same live and on replay.

// watchWorld is a node with a sensitive PAY row and a high token for it.
type watchWorld struct {
	n     *capdir.Node
	up    *upstreamtest.Upstream
	clock *brkClock
	tok   string
}

func newWatchWorld(t *testing.T) *watchWorld {
	w := &watchWorld{up: upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, `{"paid":true}`)), clock: &brkClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}}
	w.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Dispatch.Approvals.Sweep = 20 * time.Millisecond
	}, capdir.WithClock(w.clock.Now))
	tokRow(t, w.n, map[string]any{"key": "PAY", "type": "http", "target": "POST " + w.up.URL + "/pay", "sensitive": 1,
		"input_schema": `{"type":"string"}`, "content": "# WHAT: Pay an amount.\n# ARGS: $1=amount\n{\"amount\":\"$1\"}"})
	w.tok = mint(t, w.n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	return w
}

// heldAnswer is a dispatch's 202 for a held call.
type heldAnswer struct {
	Pending      bool   `json:"pending"`
	Ran          bool   `json:"ran"`
	Status       string `json:"status"`
	InvocationID string `json:"invocation_id"`
	Approval     string `json:"approval"`
	Trace        string `json:"trace"`
}

// hold dispatches PAY with body as the token holder and checks it is held.
func (w *watchWorld) hold(t *testing.T, body string) heldAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"key": "PAY", "body": body})
	code, out := nodetest.DoToken(t, w.n, "POST", "/api/dispatch", string(b), w.tok)
	var h heldAnswer
	if code != 202 || json.Unmarshal([]byte(out), &h) != nil || !h.Pending || h.Ran || h.Status != wire.StatusPendingApproval ||
		!strings.HasPrefix(h.InvocationID, "inv_") || h.Approval != "/api/approvals/"+h.InvocationID {
		t.Fatalf("token holder's call to PAY: %d %s; want 202 pending with the approval's path", code, out)
	}
	return h
}

// decide posts the owner's decision and returns the status and answer.
func (w *watchWorld) decide(t *testing.T, inv, decision string) (int, map[string]any) {
	t.Helper()
	code, out := nodetest.Do(t, w.n, "POST", "/api/approvals/"+inv, `{"decision":"`+decision+`"}`)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("POST /api/approvals/%s: %d %q", inv, code, out)
	}
	return code, m
}

// pendingList is GET /api/approvals's approvals.
func (w *watchWorld) pendingList(t *testing.T) []map[string]any {
	t.Helper()
	code, out := nodetest.Do(t, w.n, "GET", "/api/approvals", "")
	var m struct {
		Approvals []map[string]any `json:"approvals"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("GET /api/approvals: %d %s", code, out)
	}
	return m.Approvals
}

// onlyReceipt checks that the log holds exactly one receipt for inv, with status.
func (w *watchWorld) onlyReceipt(t *testing.T, inv, status string) wire.Receipt {
	t.Helper()
	nodetest.WaitDispatchIdle(t, w.n.Log())
	rcs := nodetest.Receipts(t, w.n.Log(), inv)
	if len(rcs) != 1 || rcs[0].Status != status {
		t.Fatalf("receipts of %s: %+v; want exactly one %s", inv, rcs, status)
	}
	if rcs[0].Actor != "token:billing-agent" {
		t.Fatalf("receipt actor %q, want token:billing-agent", rcs[0].Actor)
	}
	return rcs[0]
}

// A held call: 202 PENDING_APPROVAL, nothing sent upstream, no receipt; the
// owner sees it, body included; the owner approves and it runs once, with exactly
// one receipt, the run's. A second decision is 409.
func TestWatcherApproveRunsOnce(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "10")
	nodetest.WaitDispatchIdle(t, w.n.Log())
	if got := w.up.Bodies(); len(got) != 0 {
		t.Fatalf("a held call reached the upstream: %q", got)
	}
	if rcs := nodetest.Receipts(t, w.n.Log(), h.InvocationID); len(rcs) != 0 {
		t.Fatalf("a held call has receipts: %+v", rcs)
	}
	if code, out := nodetest.DoKey(t, w.n, "GET", "/receipt/"+h.InvocationID, "", ""); code != 202 || !strings.Contains(out, `"pending":true`) {
		t.Fatalf("public receipt of a held call: %d %s", code, out)
	}
	list := w.pendingList(t)
	want := map[string]any{"invocation_id": h.InvocationID, "key": "PAY", "actor": "token:billing-agent", "body": "10",
		"state": "pending", "body_fingerprint": sha256hex("10"), "trace": h.Trace,
		"requested_at": "2026-12-01T09:00:00Z", "expires_at": "2026-12-01T09:15:00Z"}
	if len(list) != 1 {
		t.Fatalf("pending approvals: %v; want one", list)
	}
	for k, v := range want {
		if list[0][k] != v {
			t.Errorf("pending approval %s = %v, want %v", k, list[0][k], v)
		}
	}

	// A token holder cannot approve, nor read approvals.
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/approvals/" + h.InvocationID, `{"decision":"approve"}`},
		{"GET", "/api/approvals", ""},
		{"GET", "/api/approvals/" + h.InvocationID, ""},
	} {
		if code, out := nodetest.DoToken(t, w.n, r.method, r.path, r.body, w.tok); code != 401 {
			t.Fatalf("%s %s with the token: %d %s", r.method, r.path, code, out)
		}
	}
	if code, _ := nodetest.DoKey(t, w.n, "POST", "/api/approvals/"+h.InvocationID, `{"decision":"approve"}`, ""); code != 401 {
		t.Fatalf("approve without a credential: %d", code)
	}

	code, ans := w.decide(t, h.InvocationID, "approve")
	if code != 200 || ans["status"] != wire.StatusProvenMaterialResult || ans["ran"] != true {
		t.Fatalf("approve: %d %v", code, ans)
	}
	rc := w.onlyReceipt(t, h.InvocationID, wire.StatusProvenMaterialResult)
	if rc.Trace != h.Trace || rc.Body != "10" || !rc.Ran {
		t.Fatalf("receipt %+v", rc)
	}
	if got := w.up.Bodies(); len(got) != 1 || got[0] != `{"amount":"10"}` {
		t.Fatalf("upstream calls %q; want the held call's body once", got)
	}
	for _, d := range []string{"approve", "deny"} {
		if code, ans := w.decide(t, h.InvocationID, d); code != 409 || ans["error"] != "approval_decided" {
			t.Fatalf("%s after approve: %d %v", d, code, ans)
		}
	}
	if list := w.pendingList(t); len(list) != 0 {
		t.Fatalf("pending after the decision: %v", list)
	}
	code, out := nodetest.Do(t, w.n, "GET", "/api/approvals/"+h.InvocationID, "")
	if code != 200 || !strings.Contains(out, `"state":"approved"`) || !strings.Contains(out, `"decided_by":"owner:terminal-key"`) {
		t.Fatalf("GET the approval: %d %s", code, out)
	}
	if got := w.up.Bodies(); len(got) != 1 {
		t.Fatalf("upstream calls after the 409s: %q", got)
	}
}

// A denied call never reaches the upstream and has one receipt,
// REFUSED_APPROVAL_DENIED, written at once; an approval after it is 409.
func TestWatcherDeny(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "20")
	code, ans := w.decide(t, h.InvocationID, "deny")
	if code != 200 || ans["status"] != wire.StatusRefusedApprovalDenied || ans["ran"] != false {
		t.Fatalf("deny: %d %v", code, ans)
	}
	wait := "/api/dispatch?receipt=" + h.InvocationID + "&wait=30s"
	if code, out := nodetest.DoToken(t, w.n, "GET", wait, "", w.tok); code != 200 ||
		!strings.Contains(out, `"ok":false,"ran":false`) || !strings.Contains(out, `"status":"REFUSED_APPROVAL_DENIED"`) {
		t.Fatalf("the holder's wait for its denied call: %d %s", code, out)
	}
	rc := w.onlyReceipt(t, h.InvocationID, wire.StatusRefusedApprovalDenied)
	if rc.Ran || rc.OK || rc.Result != "approval_denied" || rc.Body != "20" || rc.Fingerprints.Input != sha256hex("20") || rc.Type != "http" {
		t.Fatalf("denied receipt %+v", rc)
	}
	if code, ans := w.decide(t, h.InvocationID, "approve"); code != 409 {
		t.Fatalf("approve after deny: %d %v", code, ans)
	}
	if got := w.up.Bodies(); len(got) != 0 {
		t.Fatalf("a denied call reached the upstream: %q", got)
	}
}

// A call nobody decides on expires: any node's sweeper appends the expiry and
// the REFUSED_APPROVAL_EXPIRED receipt; deciding afterwards is 410.
func TestWatcherExpiry(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "30")
	w.clock.advance(15*time.Minute - time.Second)
	if code, out := nodetest.Do(t, w.n, "GET", "/api/approvals/"+h.InvocationID, ""); code != 200 || !strings.Contains(out, `"state":"pending"`) {
		t.Fatalf("a second before its expiry: %d %s", code, out)
	}
	w.clock.advance(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(nodetest.Receipts(t, w.n.Log(), h.InvocationID)) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the expired approval got no receipt")
		case <-time.After(20 * time.Millisecond):
		}
	}
	rc := w.onlyReceipt(t, h.InvocationID, wire.StatusRefusedApprovalExpired)
	if rc.Ran || rc.Result != "approval_expired" {
		t.Fatalf("expired receipt %+v", rc)
	}
	for _, d := range []string{"approve", "deny"} {
		if code, ans := w.decide(t, h.InvocationID, d); code != 410 || ans["error"] != "approval_expired" {
			t.Fatalf("%s after the expiry: %d %v", d, code, ans)
		}
	}
	code, out := nodetest.Do(t, w.n, "GET", "/api/approvals/"+h.InvocationID, "")
	if code != 200 || !strings.Contains(out, `"state":"expired"`) || !strings.Contains(out, `"decided_by":"engine:`) {
		t.Fatalf("GET the expired approval: %d %s", code, out)
	}
	if list := w.pendingList(t); len(list) != 0 {
		t.Fatalf("pending after the expiry: %v", list)
	}
	if got := w.up.Bodies(); len(got) != 0 {
		t.Fatalf("an expired call reached the upstream: %q", got)
	}
}

// The owner is the approver: the owner's own call to a sensitive row runs at once.
func TestWatcherOwnerRunsAtOnce(t *testing.T) {
	w := newWatchWorld(t)
	code, out := nodetest.Do(t, w.n, "POST", "/api/dispatch", `{"key":"PAY","body":"40"}`)
	if code != 200 || !strings.Contains(out, `"status":"PROVEN_MATERIAL_RESULT"`) {
		t.Fatalf("owner's call: %d %s", code, out)
	}
	if got := w.up.Bodies(); len(got) != 1 {
		t.Fatalf("upstream calls %q", got)
	}
	if list := w.pendingList(t); len(list) != 0 {
		t.Fatalf("the owner's call asked for approval: %v", list)
	}
}

// Nothing but capdir's own re-run of the approved request runs it: another
// request repeating the held call's invocation id (another body) is neither run
// nor given a receipt, and the approval still runs the held body.
func TestWatcherRepeatedInvocationIDNeverRuns(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "50")
	forged := wire.InvocationRequest{InvocationID: h.InvocationID, Trace: h.Trace, Key: "PAY", Body: "99999",
		Credential: wire.BearerCredential, Token: w.tok}
	ev, err := wire.PrepareRequest(w.clock.Now(), &forged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.n.Log().Append(context.Background(), wire.RequestSubject("PAY"), ev); err != nil {
		t.Fatal(err)
	}
	nodetest.WaitDispatchIdle(t, w.n.Log())
	if got := w.up.Bodies(); len(got) != 0 {
		t.Fatalf("the repeated request ran: %q", got)
	}
	if rcs := nodetest.Receipts(t, w.n.Log(), h.InvocationID); len(rcs) != 0 {
		t.Fatalf("the repeated request got a receipt: %+v", rcs)
	}
	if list := w.pendingList(t); len(list) != 1 || list[0]["body"] != "50" {
		t.Fatalf("pending approvals %v; want the held call's alone", list)
	}
	if code, ans := w.decide(t, h.InvocationID, "approve"); code != 200 || ans["status"] != wire.StatusProvenMaterialResult {
		t.Fatalf("approve: %d %v", code, ans)
	}
	w.onlyReceipt(t, h.InvocationID, wire.StatusProvenMaterialResult)
	if got := w.up.Bodies(); len(got) != 1 || got[0] != `{"amount":"50"}` {
		t.Fatalf("upstream calls %q; want the held body once", got)
	}
}

// Hostile and mistaken decisions are refused with what to fix, and append nothing.
func TestWatcherBadDecisions(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "60")
	if err := nodetest.CatchUp(context.Background(), w.n); err != nil {
		t.Fatal(err)
	}
	before := lastSeqs(t, w.n)
	for _, c := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/api/approvals/" + h.InvocationID, `{"decision":"maybe"}`, 400, `send {\"decision\":\"approve\"} or {\"decision\":\"deny\"}`},
		{"/api/approvals/" + h.InvocationID, `{"decision":"approve","by":"someone"}`, 400, `send {\"decision\":\"approve\"} or {\"decision\":\"deny\"}`},
		{"/api/approvals/" + h.InvocationID, `not json`, 400, `send {\"decision\":\"approve\"} or {\"decision\":\"deny\"}`},
		{"/api/approvals/" + h.InvocationID, `{"decision":"expire"}`, 400, `send {\"decision\":\"approve\"} or {\"decision\":\"deny\"}`},
		{"/api/approvals/inv_nosuch", `{"decision":"approve"}`, 404, `"error":"not_found"`},
		{"/api/approvals/a.b", `{"decision":"deny"}`, 404, `"error":"not_found"`},
	} {
		code, out := nodetest.Do(t, w.n, "POST", c.path, c.body)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("POST %s %s: %d %s; want %d with %s", c.path, c.body, code, out, c.code, c.want)
		}
	}
	mustAppendNothing(t, w.n, before, "a refused decision")
}

// sha256hex is the hex SHA-256 of s: a body's fingerprint.
func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// confirmOf is the public ?confirm= answer for inv.
func confirmOf(t *testing.T, n *capdir.Node, inv string) (int, map[string]any) {
	t.Helper()
	code, out := nodetest.DoKey(t, n, "GET", "/api/dispatch?confirm="+inv, "", "")
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("confirm %s: %d %q", inv, code, out)
	}
	return code, m
}

// A token holder's flow reaching a sensitive row: the step cannot wait for the
// owner inside the flow, so it is refused with a final receipt,
// REFUSED_APPROVAL_REQUIRED approval_required:PAY, and the flow stops there;
// nothing is paid, no approval is left waiting. ?confirm= says confirmed only
// for a proven result: false for the step and for the flow, true for the
// owner's run of the same flow, whose step runs at once.
func TestSensitiveStepOfATokenHoldersFlowIsRefused(t *testing.T) {
	w := newWatchWorld(t)
	tokRow(t, w.n, map[string]any{"key": "PAYFLOW", "type": "flow", "content": "# WHAT: Pay through a flow.\n# ARGS: $1=amount\nPAY: $1"})
	tok := mint(t, w.n, `{"sub":"billing-agent","scope":{"keys":["PAYFLOW","PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	code, out := nodetest.DoToken(t, w.n, "POST", "/api/dispatch", `{"key":"PAYFLOW","body":"10"}`, tok)
	var a flowAnswer
	if code != 200 || json.Unmarshal([]byte(out), &a) != nil || a.OK || a.Result != "ERR:flow:refused:1:approval_required:PAY" {
		t.Fatalf("the token holder's flow: %d %s; want ERR:flow:refused:1:approval_required:PAY", code, out)
	}
	step := dispatcher.StepInvocationID(a.Proof.InvocationID, "1")
	nodetest.WaitDispatchIdle(t, w.n.Log())
	if rcs := nodetest.Receipts(t, w.n.Log(), step); len(rcs) != 1 || rcs[0].Status != wire.StatusRefusedApprovalRequired || rcs[0].Ran ||
		rcs[0].Result != "approval_required:PAY" {
		t.Fatalf("the step's receipts %+v; want one REFUSED_APPROVAL_REQUIRED approval_required:PAY", rcs)
	}
	if got := w.up.Bodies(); len(got) != 0 {
		t.Fatalf("the sensitive step reached the upstream: %q", got)
	}
	if list := w.pendingList(t); len(list) != 0 {
		t.Fatalf("approvals waiting: %v; want none", list)
	}
	for _, inv := range []string{step, a.Proof.InvocationID} {
		if code, c := confirmOf(t, w.n, inv); code != 200 || c["confirmed"] != false || c["status"] == wire.StatusProvenMaterialResult {
			t.Fatalf("confirm %s: %d %v; want confirmed false with its status", inv, code, c)
		}
	}
	owner := dispatchOK(t, w.n, "PAYFLOW", "12")
	if !owner.OK || len(w.up.Bodies()) != 1 {
		t.Fatalf("the owner's flow: %+v, upstream %q", owner, w.up.Bodies())
	}
	if code, c := confirmOf(t, w.n, owner.Proof.InvocationID); code != 200 || c["confirmed"] != true || c["status"] != wire.StatusProvenMaterialResult {
		t.Fatalf("confirm of the owner's flow: %d %v", code, c)
	}
}

// ?confirm= for a denied call: 200, confirmed false, the denial's status.
func TestConfirmOfADeniedCallIsFalse(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "10")
	if code, c := confirmOf(t, w.n, h.InvocationID); code != 202 || c["confirmed"] != false || c["status"] != "PENDING" {
		t.Fatalf("confirm while held: %d %v", code, c)
	}
	if code, ans := w.decide(t, h.InvocationID, "deny"); code != 200 {
		t.Fatalf("deny: %d %v", code, ans)
	}
	if code, c := confirmOf(t, w.n, h.InvocationID); code != 200 || c["confirmed"] != false || c["status"] != wire.StatusRefusedApprovalDenied {
		t.Fatalf("confirm of a denied call: %d %v; want confirmed false, REFUSED_APPROVAL_DENIED", code, c)
	}
}

// A token holder waits for its own held call's outcome without the owner key
// (GET /api/dispatch?receipt=…&wait=…): held, then the result once the owner
// approves. Another token's subject is told the id is unknown; no credential, a
// wrong one, and a bad wait are refused.
func TestWatcherTokenHolderWaitsForItsOwnCall(t *testing.T) {
	w := newWatchWorld(t)
	h := w.hold(t, "70")
	wait := "/api/dispatch?receipt=" + h.InvocationID + "&wait=30s"
	var held map[string]any
	code, out := nodetest.DoToken(t, w.n, "GET", "/api/dispatch?receipt="+h.InvocationID, "", w.tok)
	if code != 202 || json.Unmarshal([]byte(out), &held) != nil || held["status"] != wire.StatusPendingApproval || held["wait"] != wait {
		t.Fatalf("the holder's look at its held call: %d %s; want 202 %s with wait %s", code, out, wire.StatusPendingApproval, wait)
	}
	other := mint(t, w.n, `{"sub":"someone-else","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	path := "/api/dispatch?receipt=" + h.InvocationID
	for _, c := range []struct {
		name      string
		code      int
		out, want string
	}{
		{"another subject", 404, statusBody(nodetest.DoToken(t, w.n, "GET", path, "", other)), `{"error":"not_found","invocation_id":"` + h.InvocationID + `"}`},
		{"no credential", 401, statusBody(nodetest.DoKey(t, w.n, "GET", path, "", "")), `"error":"unauthorized"`},
		{"a wrong owner key", 401, statusBody(nodetest.DoKey(t, w.n, "GET", path, "", "not-the-owner-key-0123456789")), `"error":"unauthorized"`},
		{"a forged token", 401, statusBody(nodetest.DoToken(t, w.n, "GET", path, "", w.tok[:len(w.tok)-4]+"AAAA")), `"ran":false`},
	} {
		if !strings.HasPrefix(c.out, fmt.Sprint(c.code)+" ") || !strings.Contains(c.out, c.want) {
			t.Errorf("%s: %s; want %d with %s", c.name, c.out, c.code, c.want)
		}
	}
	for _, q := range []string{"&wait=forever", "&wait=-1s", "&wait=1e9"} {
		if code, out := nodetest.DoToken(t, w.n, "GET", "/api/dispatch?receipt="+h.InvocationID+q, "", w.tok); code != 400 ||
			!strings.Contains(out, "wait must be a duration of 0s or more, such as 30s") {
			t.Errorf("%s: %d %s", q, code, out)
		}
	}
	for _, id := range []string{"inv_nosuch", strings.Repeat("inv_", 20000), "..%2F..%2Fapi%2Fdirectory", "%00"} {
		if code, out := nodetest.DoToken(t, w.n, "GET", "/api/dispatch?receipt="+id+"&wait=30s", "", w.tok); code != 404 || !strings.Contains(out, `"error":"not_found"`) {
			t.Errorf("an unknown id %.40s: %d %.200s", id, code, out)
		}
	}
	if code, out := nodetest.DoToken(t, w.n, "GET", "/api/dispatch?receipt=&wait=30s", "", w.tok); code != 400 || !strings.Contains(out, "receipt needs the invocation id of a call") {
		t.Errorf("no id: %d %s", code, out)
	}

	done := make(chan string, 1)
	go func() {
		code, out := nodetest.DoToken(t, w.n, "GET", wait, "", w.tok)
		done <- fmt.Sprint(code, " ", out)
	}()
	if code, ans := w.decide(t, h.InvocationID, "approve"); code != 200 || ans["status"] != wire.StatusProvenMaterialResult {
		t.Fatalf("approve: %d %v", code, ans)
	}
	got := <-done
	if !strings.HasPrefix(got, `200 {"ok":true,"ran":true,"trace":"`+h.Trace+`","result":"HTTP 200:{\"paid\":true}","proof":{"ok":true,"invocation_id":"`+h.InvocationID) {
		t.Fatalf("the holder's wait: %s; want the approved call's result", got)
	}
	if code, out := nodetest.DoToken(t, w.n, "GET", wait, "", other); code != 404 {
		t.Fatalf("another subject after the run: %d %s", code, out)
	}
	if code, out := nodetest.Do(t, w.n, "GET", wait, ""); code != 200 || !strings.Contains(out, `"result":"HTTP 200:{\"paid\":true}"`) {
		t.Fatalf("the owner's look: %d %s", code, out)
	}
	w.onlyReceipt(t, h.InvocationID, wire.StatusProvenMaterialResult)
}

// statusBody is an answer's status and body on one line, for a table of answers.
func statusBody(code int, body string) string { return fmt.Sprint(code, " ", strings.TrimSpace(body)) }
