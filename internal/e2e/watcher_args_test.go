package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A held call with named arguments: the approval's body fingerprint is that of
// the arguments as sent (the approval's body), not the empty body's; the
// approved call runs with those arguments, and a denied one's receipt, which
// records them as sent, has the approval's fingerprint as its input's.
func TestWatcherFingerprintsNamedArguments(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, `{"paid":true}`))
	clock := &brkClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	n := nodetest.Start(t, func(c *capdir.Config) { c.Dispatch.Approvals.Sweep = 20 * time.Millisecond }, capdir.WithClock(clock.Now))
	tokRow(t, n, map[string]any{"key": "PAY", "type": "http", "target": "POST " + up.URL + "/pay", "sensitive": 1,
		"input_schema": `{"type":"object","properties":{"to":{"type":"string"},"amount":{"type":"string"}},"required":["to","amount"]}`,
		"content":      "# WHAT: Pay an amount.\n# ARGS: $1=to $2=amount\n{\"to\":\"$1\",\"amount\":\"$2\"}"})
	tok := mint(t, n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	empty := sha256hex("")
	hold := func(args string) (string, string) {
		t.Helper()
		code, out := nodetest.DoToken(t, n, "POST", "/api/dispatch", `{"key":"PAY","body":`+args+`}`, tok)
		var h heldAnswer
		if code != 202 || json.Unmarshal([]byte(out), &h) != nil || h.Status != wire.StatusPendingApproval {
			t.Fatalf("held call: %d %s", code, out)
		}
		code, out = nodetest.Do(t, n, "GET", "/api/approvals/"+h.InvocationID, "")
		var a struct {
			Body            string `json:"body"`
			BodyFingerprint string `json:"body_fingerprint"`
		}
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil {
			t.Fatalf("GET /api/approvals/%s: %d %s", h.InvocationID, code, out)
		}
		if a.BodyFingerprint == empty || a.BodyFingerprint != sha256hex(a.Body) || a.Body != args {
			t.Fatalf("the approval's body fingerprint is not its arguments': %s", out)
		}
		return h.InvocationID, a.BodyFingerprint
	}
	decide := func(inv, decision string) {
		t.Helper()
		if code, out := nodetest.Do(t, n, "POST", "/api/approvals/"+inv, `{"decision":"`+decision+`"}`); code != 200 {
			t.Fatalf("%s %s: %d %s", decision, inv, code, out)
		}
	}
	only := func(inv, status string) wire.Receipt {
		t.Helper()
		nodetest.WaitDispatchIdle(t, n.Log())
		rcs := nodetest.Receipts(t, n.Log(), inv)
		if len(rcs) != 1 || rcs[0].Status != status {
			t.Fatalf("receipts of %s: %+v; want one %s", inv, rcs, status)
		}
		return rcs[0]
	}

	paid, fp := hold(`{"to":"alice","amount":"10"}`)
	decide(paid, "approve")
	deadline := time.Now().Add(20 * time.Second)
	for len(nodetest.Receipts(t, n.Log(), paid)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	rc := only(paid, wire.StatusProvenMaterialResult)
	if rc.Body != "alice|10" || rc.Fingerprints.Input != sha256hex(rc.Body) || fp == empty {
		t.Fatalf("approved call: %+v", rc)
	}
	if got := up.Bodies(); len(got) != 1 || got[0] != `{"to":"alice","amount":"10"}` {
		t.Fatalf("the upstream got %q", got)
	}

	denied, fp := hold(`{"to":"mallory","amount":"99"}`)
	decide(denied, "deny")
	rc = only(denied, wire.StatusRefusedApprovalDenied)
	if rc.Fingerprints.Input != fp || fp != sha256hex(rc.Body) || rc.Body == "" {
		t.Fatalf("denied call: the receipt's input fingerprint %s over %q, the approval's %s; want one, of the arguments", rc.Fingerprints.Input, rc.Body, fp)
	}
}
