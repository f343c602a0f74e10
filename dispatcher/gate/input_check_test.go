package gate_test

import (
	"encoding/json"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// A token holder's arguments are checked after everything the token decides
// (scope, pin, risk, fixed body, its payload ceiling), so an input refusal never
// tells a caller more than its token lets it learn; an arguments object counts
// against the payload ceilings and never matches a fixed body.
func TestGateInputAfterTokenChecks(t *testing.T) {
	w := newTokenWorld(t)
	w.rows["PT"] = pointRow()
	w.rows["PT"].Sensitive = 1
	oldFP := "0000000000000000000000000000000000000000000000000000000000000000"
	greet, _ := w.mint(token.MintRequest{Scope: scope("GREET")})
	ptLow, _ := w.mint(token.MintRequest{Scope: scope("PT")})
	ptHigh, _ := w.mint(token.MintRequest{Scope: scope("PT"), Risk: token.RiskHigh})
	ptPinned, _ := w.mint(token.MintRequest{Scope: scope("PT"), Risk: token.RiskHigh, Pin: oldFP})
	ptFixed, _ := w.mint(token.MintRequest{Scope: scope("PT"), Risk: token.RiskHigh, Body: strp("1")})
	ptSmall, _ := w.mint(token.MintRequest{Scope: scope("PT"), Risk: token.RiskHigh, MaxPayload: 6})
	greetFixed, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Body: strp("")})

	for _, tc := range []struct {
		name, key, body, args, tok string
		status, reason             string
	}{
		// Arguments that pass reach the watcher, the last check: the row is sensitive.
		{name: "input passes: pipe", key: "PT", body: "1|2", tok: ptHigh, status: wire.StatusPendingApproval, reason: "approval_pending"},
		{name: "input passes: object", key: "PT", args: `{"x":1}`, tok: ptHigh, status: wire.StatusPendingApproval, reason: "approval_pending"},
		{name: "input", key: "PT", body: "a", tok: ptHigh, status: wire.StatusRefusedInput, reason: `ERR:input:x: must be number, got string "a"`},
		{name: "scope before input", key: "PT", body: "a", tok: greet, status: wire.StatusRefusedScope, reason: "scope:PT"},
		{name: "scope before an object", key: "PT", args: `{"z":1}`, tok: greet, status: wire.StatusRefusedScope, reason: "scope:PT"},
		{name: "pin before input", key: "PT", body: "a", tok: ptPinned, status: wire.StatusRefusedContractChanged,
			reason: "contract_changed:" + oldFP + "!=" + contract.Fingerprint(w.rows["PT"])},
		{name: "risk before input", key: "PT", body: "a", tok: ptLow, status: wire.StatusRefusedScope, reason: "risk_ceiling:low<row:high"},
		{name: "fixed body before input", key: "PT", body: "a", tok: ptFixed, status: wire.StatusRefusedScope, reason: "body_fixed:" + sum16("1") + "!=" + sum16("a")},
		{name: "an object never matches a fixed body", key: "PT", args: `{"x":1}`, tok: ptFixed, status: wire.StatusRefusedScope,
			reason: "body_fixed:" + sum16("1") + "!=" + sum16(`{"x":1}`)},
		{name: "an object never matches an empty fixed body", key: "GREET", args: `{"a":1}`, tok: greetFixed, status: wire.StatusRefusedScope,
			reason: "body_fixed:" + sum16("") + "!=" + sum16(`{"a":1}`)},
		{name: "an object counts against the token's payload ceiling", key: "PT", args: `{"x":1}`, tok: ptSmall, status: wire.StatusRefusedPayloadTooLarge, reason: "payload_ceiling:7>6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := w.input(tc.key, tc.body, tc.tok, false)
			if tc.args != "" {
				in.Req.Args = json.RawMessage(tc.args)
			}
			_, r := w.gate.Check(in)
			saw(r)
			switch {
			case tc.status == "" && r != nil:
				t.Fatalf("refused %s %q, want admitted", r.Status, r.Literal)
			case tc.status != "" && r == nil:
				t.Fatalf("admitted, want %s %q", tc.status, tc.reason)
			case r != nil && (r.Status != tc.status || r.Literal != tc.reason):
				t.Fatalf("refused %s %q\nwant    %s %q", r.Status, r.Literal, tc.status, tc.reason)
			}
		})
	}
}
