package dispatcher

import (
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
)

// A held call's pending receipt wakes the caller of the first run, not the
// approved re-run's caller waiting on the same invocation for its final
// receipt, which the final receipt then wakes.
func TestPendingReceiptLeavesTheReRunsWaiterWaiting(t *testing.T) {
	w := newWaiters(newReceiptIDs("test"))
	first := w.add("inv_x")
	rerun := w.addFinal("inv_x")
	pending := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_x", Status: wire.StatusPendingApproval}}
	w.wakePending("inv_x", &pending)
	if rc := <-first; rc.Status != wire.StatusPendingApproval {
		t.Fatalf("the first run's caller got %s, want the pending receipt", rc.Status)
	}
	select {
	case rc := <-rerun:
		t.Fatalf("the re-run's caller was woken by the first run's %s receipt", rc.Status)
	default:
	}
	final := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_x", Status: wire.StatusProvenMaterialResult}}
	w.deliver(&final)
	if rc := <-rerun; rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("the re-run's caller got %s, want the final receipt", rc.Status)
	}
	if _, ok := w.m["inv_x"]; ok {
		t.Fatal("a waiter is left once every caller was woken")
	}
}
