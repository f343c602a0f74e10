package dispatcher_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// A call to a sensitive row is answered at once with the pending state; the owner
// decides; the call sent again under its invocation id gets the approved run's
// receipt, and the log holds that one receipt.
func TestABusCallHeldForApprovalIsSentAgainForItsOutcome(t *testing.T) {
	st, s, tok := approvalStack(t)
	nc := busConn(t, st, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := wire.Call(ctx, nc, "c1", "PAY", "8", wire.WithToken(tok))
	if err != nil || rc.Status != wire.StatusPendingApproval {
		t.Fatalf("a call to a sensitive row: %+v, %v; want %s at once", rc.ReceiptSummary, err, wire.StatusPendingApproval)
	}
	if _, err := s.DecideApproval(ctx, rc.InvocationID, wire.DecisionApprove, wire.OwnerActor); err != nil {
		t.Fatal(err)
	}
	again, err := wire.Call(ctx, nc, "c1", "PAY", "8", wire.WithToken(tok), wire.WithInvocationID(rc.InvocationID))
	if err != nil || again.InvocationID != rc.InvocationID || again.Status != wire.StatusProvenMaterialResult || again.Result != "8" || again.Actor != "token:agent-7" {
		t.Fatalf("sent again once approved: %+v %q, %v", again.ReceiptSummary, again.Result, err)
	}
	if rcs := nodetest.Receipts(t, st.log, rc.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}
