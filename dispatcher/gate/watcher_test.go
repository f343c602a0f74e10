package gate_test

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// The watcher, the last check: a sensitive row's call from a caller other than
// the owner is held for approval on its first delivery (no receipt), and runs as
// capdir's re-run only with the approval granted for its key and body.
func TestGateWatcher(t *testing.T) {
	k, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	minter, _ := token.NewMinter(token.MinterConfig{Key: k, Audience: audience})
	verifier, _ := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: audience})
	now := t0
	approvals := map[string]gate.Approval{}
	g, err := gate.New(gate.Config{
		MaxPayload: 1024, Tokens: verifier, Revoked: neverRevoked, Clock: func() time.Time { return now },
		Breaker:  breaker.Config{Threshold: 8, Cooldown: time.Hour},
		Approval: func(inv string) gate.Approval { return approvals[inv] },
	})
	if err != nil {
		t.Fatal(err)
	}
	high, _, _ := minter.Mint(token.MintRequest{Subject: "agent-7", Scope: scope("PAY", "SAY", "OFF", "API"), Risk: token.RiskHigh, TTL: time.Hour}, t0)
	pay := &contract.Row{Key: "PAY", Type: "fn", Target: "pay", Enabled: 1, Sensitive: 1, InputSchema: `{"type":"string"}`}
	say := &contract.Row{Key: "SAY", Type: "fn", Target: "echo", Enabled: 1}
	off := &contract.Row{Key: "OFF", Type: "fn", Target: "pay", Enabled: 0, Sensitive: 1}
	api := &contract.Row{Key: "API", Type: "http", Target: "POST http://127.0.0.1:1/pay", Enabled: 1, Sensitive: 1}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	exp := t0.Add(15 * time.Minute)
	granted := gate.Approval{State: gate.ApprovalGranted, By: wire.OwnerActor, Key: "PAY", BodyFingerprint: sum("10"), ExpiresAt: exp}
	approvals["inv_granted"] = granted
	approvals["inv_denied"] = gate.Approval{State: gate.ApprovalDenied, By: wire.OwnerActor, Key: "PAY", BodyFingerprint: sum("10"), ExpiresAt: exp}
	approvals["inv_expired"] = gate.Approval{State: gate.ApprovalExpired, By: "engine:n1", Key: "PAY", BodyFingerprint: sum("10"), ExpiresAt: exp}
	approvals["inv_pending"] = gate.Approval{State: gate.ApprovalPending, Key: "PAY", BodyFingerprint: sum("10"), ExpiresAt: exp}
	approvals["inv_api"] = gate.Approval{State: gate.ApprovalGranted, Key: "API", BodyFingerprint: sum("10"), ExpiresAt: exp}

	const (
		pending = wire.StatusPendingApproval
		denied  = wire.StatusRefusedApprovalDenied
		expired = wire.StatusRefusedApprovalExpired
		bad     = wire.StatusRefusedBadRequest
	)
	for _, tc := range []struct {
		name         string
		inv, body    string
		row          *contract.Row
		owner, rerun bool
		shape, step  bool
		breaker      breaker.State
		at           time.Duration
		status       string // "" admitted
		reason       string
	}{
		{name: "owner runs at once", inv: "inv_new", body: "10", row: pay, owner: true},
		{name: "not sensitive", inv: "inv_new", body: "10", row: say},
		{name: "shape runs nothing", inv: "inv_new", body: "10", row: pay, shape: true},
		{name: "first delivery is held", inv: "inv_new", body: "10", row: pay, status: pending, reason: "approval_pending"},
		{name: "first delivery is held, even with a granted approval", inv: "inv_granted", body: "10", row: pay, status: pending, reason: "approval_pending"},
		{name: "an id that cannot name a subject", inv: "inv.x", body: "10", row: pay, status: bad, reason: "approval:bad_invocation_id"},
		{name: "re-run granted", inv: "inv_granted", body: "10", row: pay, rerun: true},
		{name: "re-run granted, past the expiry", inv: "inv_granted", body: "10", row: pay, rerun: true, at: time.Hour},
		{name: "re-run with another body", inv: "inv_granted", body: "11", row: pay, rerun: true, status: bad, reason: "approval:not_granted"},
		{name: "re-run denied", inv: "inv_denied", body: "10", row: pay, rerun: true, status: denied, reason: "approval_denied"},
		{name: "re-run expired", inv: "inv_expired", body: "10", row: pay, rerun: true, status: expired, reason: "approval_expired"},
		{name: "re-run pending past its expiry", inv: "inv_pending", body: "10", row: pay, rerun: true, at: 15 * time.Minute, status: expired, reason: "approval_expired"},
		{name: "re-run pending", inv: "inv_pending", body: "10", row: pay, rerun: true, status: bad, reason: "approval:not_granted"},
		{name: "re-run without an approval", inv: "inv_none", body: "10", row: pay, rerun: true, status: bad, reason: "approval:not_granted"},
		// A step cannot be held: refused for good; the owner's runs.
		{name: "a step is refused", inv: "inv_new-1", body: "10", row: pay, step: true, status: wire.StatusRefusedApprovalRequired, reason: "approval_required:PAY"},
		{name: "a step of a granted call is refused", inv: "inv_granted-1", body: "10", row: pay, step: true, status: wire.StatusRefusedApprovalRequired, reason: "approval_required:PAY"},
		{name: "the owner's step runs", inv: "inv_new-1", body: "10", row: pay, step: true, owner: true},
		{name: "a step in shape mode runs nothing", inv: "inv_new-1", body: "10", row: pay, step: true, shape: true},
		// The watcher is last: every other refusal comes first.
		{name: "disabled before held", inv: "inv_new", body: "10", row: off, status: wire.StatusRefusedDisabled, reason: "ERR:disabled:OFF"},
		{name: "breaker before held", inv: "inv_new", body: "10", row: api, status: wire.StatusRefusedBreakerOpen,
			breaker: breaker.State{Key: "API", Strikes: 8, Open: true, OpenedAt: t0}, reason: breaker.Message("API", 8)},
		{name: "breaker before a granted re-run", inv: "inv_api", body: "10", row: api, rerun: true, status: wire.StatusRefusedBreakerOpen,
			breaker: breaker.State{Key: "API", Strikes: 8, Open: true, OpenedAt: t0}, reason: breaker.Message("API", 8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = t0.Add(tc.at)
			tok := high
			if tc.owner {
				tok = ""
			}
			in := &gate.Input{Req: &wire.InvocationRequest{InvocationID: tc.inv, Key: tc.row.Key, Body: tc.body, Token: tok, Shape: tc.shape},
				Row: tc.row, Fingerprint: contract.Fingerprint(tc.row), Owner: tc.owner, Rerun: tc.rerun, Step: tc.step, Breaker: tc.breaker}
			if tc.at >= time.Hour {
				// A token an hour old has expired: re-mint one valid then.
				in.Req.Token, _, _ = minter.Mint(token.MintRequest{Subject: "agent-7", Scope: scope("PAY"), Risk: token.RiskHigh}, now)
			}
			_, r := g.Check(in)
			saw(r)
			switch {
			case tc.status == "" && r != nil:
				t.Fatalf("refused %s %q, want admitted", r.Status, r.Literal)
			case tc.status != "" && r == nil:
				t.Fatalf("admitted, want %s %q", tc.status, tc.reason)
			case r != nil && (r.Status != tc.status || r.Literal != tc.reason):
				t.Fatalf("refused %s %q, want %s %q", r.Status, r.Literal, tc.status, tc.reason)
			case r != nil && (r.Pending) != (tc.status == pending):
				t.Fatalf("refusal kind %q for %s", r.Kind, r.Status)
			}
		})
	}
}

// Without an approval source no re-run is ever admitted: a sensitive row runs for
// the owner only.
func TestGateWatcherWithoutApprovals(t *testing.T) {
	w := newTokenWorld(t)
	high, _ := w.mint(token.MintRequest{Scope: scope("PAY"), Risk: token.RiskHigh})
	in := w.input("PAY", "", high, false)
	in.Rerun = true
	if _, r := w.gate.Check(in); r == nil || r.Literal != "approval:not_granted" {
		t.Fatalf("re-run without an approval source: %+v", r)
	}
}
