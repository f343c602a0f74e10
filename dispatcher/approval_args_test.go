package dispatcher_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// A held call made with an arguments object runs, once approved, with those
// arguments, and the owner is shown them before deciding: the approval names the
// request in the log, arguments and all.
func TestAnApprovedCallKeepsItsArguments(t *testing.T) {
	st, s, _ := approvalStack(t)
	row := fnRow("PAYARGS", "echo", "# WHAT: pay")
	row.Sensitive, row.InputSchema = 1, `{"type":"object","required":["amount"],"properties":{"amount":{"type":"string"}}}`
	st.putRow(t, row)
	tok, _, err := st.minter.Mint(token.MintRequest{Subject: "agent-7", Scope: token.Scope{Keys: []string{"PAYARGS"}}, Risk: token.RiskHigh, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: "PAYARGS", Args: json.RawMessage(`{"amount":"42"}`), Credential: wire.BearerCredential, Token: tok})
	if err != nil || rc.Status != wire.StatusPendingApproval {
		t.Fatalf("held call: %+v, %v", rc, err)
	}
	a, err := s.LookupApproval(ctx, rc.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := s.ApprovalBody(ctx, &a); err != nil || body != `{"amount":"42"}` {
		t.Fatalf("the owner is shown %q, %v; want the arguments object", body, err)
	}
	rc, err = s.DecideApproval(ctx, a.InvocationID, wire.DecisionApprove, wire.OwnerActor)
	if err != nil || rc.Status != wire.StatusProvenMaterialResult || rc.Result != "42" {
		t.Fatalf("approved call: %+v, %v; want it run with its arguments", rc, err)
	}
	awaitOneReceipt(t, st, a.InvocationID)
}
