package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The owner lists the held calls and approves or denies them from the command
// line; a decision already taken is refused with the server's reason.
func TestApprovalsCLI(t *testing.T) {
	n, flags := testServer(t)
	cli := func(args ...string) (string, string, error) {
		t.Helper()
		return runCLI(t, "", append(args, flags...)...)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"PAY","type":"fn","target":"echo","sensitive":1,"input_schema":"{\"type\":\"string\"}","content":"# WHAT: pay"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	code, body := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"cli-agent","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":600}`)
	var m struct{ Token string }
	if code != 201 || json.Unmarshal([]byte(body), &m) != nil {
		t.Fatalf("mint: %d %s", code, body)
	}
	hold := func(amount string) string {
		t.Helper()
		code, body := nodetest.DoToken(t, n, "POST", "/api/dispatch", `{"key":"PAY","body":"`+amount+`"}`, m.Token)
		var h struct {
			InvocationID string `json:"invocation_id"`
		}
		if code != 202 || json.Unmarshal([]byte(body), &h) != nil {
			t.Fatalf("held dispatch: %d %s", code, body)
		}
		return h.InvocationID
	}
	if out, stderr, err := cli("approvals"); err != nil || out != "" || !strings.Contains(stderr, "no call is waiting for approval") {
		t.Fatalf("approvals, none held: %v %q %q", err, out, stderr)
	}
	a, b := hold("10"), hold("20")
	out, _, err := cli("approvals")
	if err != nil || !strings.Contains(out, a+"  PAY  token:cli-agent  expires ") || !strings.Contains(out, `body "10"`) || !strings.Contains(out, b) {
		t.Fatalf("approvals: %v %q", err, out)
	}
	if out, _, err := cli("approvals", "approve", a); err != nil || out != a+" approved: PROVEN_MATERIAL_RESULT (ran: true)\n" {
		t.Fatalf("approve: %v %q", err, out)
	}
	if out, _, err := cli("approvals", "deny", b); err != nil || out != b+" denied: REFUSED_APPROVAL_DENIED (ran: false)\n" {
		t.Fatalf("deny: %v %q", err, out)
	}
	if _, _, err := cli("approvals", "approve", a); err == nil || !strings.Contains(err.Error(), "HTTP 409: approval_decided") {
		t.Fatalf("approve twice: %v", err)
	}
	if _, _, err := cli("approvals", "approve", "inv_nosuch"); err == nil || !strings.Contains(err.Error(), "HTTP 404: not_found") {
		t.Fatalf("approve an unknown id: %v", err)
	}
	if out, _, err := cli("approvals", "--json"); err != nil || strings.TrimSpace(out) != `{"approvals":[]}` {
		t.Fatalf("approvals --json: %v %q", err, out)
	}
}
