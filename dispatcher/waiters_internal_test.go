package dispatcher

import (
	"encoding/json"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// Only a RECEIPT stored on a receipt subject, naming the invocation waited for,
// wakes its waiter: one published on a request subject or a bus client's subject
// under the right event id does not, nor does one for another invocation.
func TestWaitersWakeOnlyOnAStoredReceipt(t *testing.T) {
	w := newWaiters(newReceiptIDs("salt"))
	inv := "inv_01abc"
	ch := w.add(inv)
	receipt := func(subject, forInv string) *eventlog.Stored {
		data, _ := json.Marshal(wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: forInv, Key: "K"}, Result: "forged"})
		return &eventlog.Stored{Event: wire.Event{ID: w.ids.of(inv), Type: wire.TypeReceipt, Data: data}, Subject: subject}
	}
	w.seen(wire.DataStream, receipt(wire.RequestSubject("K"), inv))
	w.seen(wire.DataStream, receipt(wire.BusRequestSubject("c1", "K"), inv))
	w.seen(wire.DataStream, receipt(wire.ReceiptSubject("K"), "inv_other"))
	select {
	case rc := <-ch:
		t.Fatalf("woken by a forged receipt: %+v", rc)
	default:
	}
	w.seen(wire.DataStream, receipt(wire.ReceiptSubject("K"), inv))
	select {
	case rc := <-ch:
		if rc.InvocationID != inv {
			t.Fatalf("woken with %+v", rc)
		}
	default:
		t.Fatal("the stored receipt did not wake its waiter")
	}
	if a, b := newReceiptIDs("one").of(inv), newReceiptIDs("two").of(inv); a == b || len(a) != len("rcpt_")+26 {
		t.Fatalf("receipt ids %q and %q: want keyed ids of 26 characters", a, b)
	}
}

// A caller waiting on one node for a call another node's worker held is woken with
// the pending state when this node reads the APPROVAL_REQUESTED: only from the
// control stream, on the invocation's own approval subject.
func TestWaitersWakeOnAHeldCall(t *testing.T) {
	w := newWaiters(newReceiptIDs("salt"))
	inv := "inv_01held"
	ch := w.add(inv)
	held := func(stream, subject, forInv string) (string, *eventlog.Stored) {
		data, _ := json.Marshal(wire.ApprovalRequested{InvocationID: forInv, Key: "PAY", Trace: "t_1", Actor: "token:agent-7"})
		return stream, &eventlog.Stored{Event: wire.Event{ID: "01X", Type: wire.TypeApprovalRequested, Data: data}, Subject: subject}
	}
	w.seen(held(wire.DataStream, wire.ApprovalSubject(inv), inv))
	w.seen(held(wire.ControlStream, wire.ApprovalSubject("inv_other"), inv))
	w.seen(held(wire.ControlStream, wire.DirectorySubject("PAY"), inv))
	select {
	case rc := <-ch:
		t.Fatalf("woken by %+v", rc)
	default:
	}
	w.seen(held(wire.ControlStream, wire.ApprovalSubject(inv), inv))
	select {
	case rc := <-ch:
		if rc.InvocationID != inv || rc.Status != wire.StatusPendingApproval || rc.Trace != "t_1" || rc.Key != "PAY" || rc.Actor != "token:agent-7" {
			t.Fatalf("woken with %+v", rc)
		}
	default:
		t.Fatal("the held call did not wake its waiter")
	}
	if r := newReceiptIDs("one"); r.rerun(inv) == r.of(inv) || len(r.rerun(inv)) != len("rrun_")+26 || r.rerun(inv) == newReceiptIDs("two").rerun(inv) {
		t.Fatal("a re-run's id must be keyed, and apart from the receipt's")
	}
}

// A channel handed back after it brought its receipt serves the next caller
// empty, and only that caller's receipt reaches it; a caller removed without
// its receipt keeps its channel, which a late sender may still fill.
func TestRecycledReceiptChannelsCarryOnlyTheirNextCallersReceipt(t *testing.T) {
	w := newWaiters(newReceiptIDs("salt"))
	for i := range 50 {
		a, b := "inv_a"+string(rune('a'+i%26)), "inv_b"+string(rune('a'+i%26))
		cha := w.add(a)
		w.deliver(&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: a}})
		if rc := <-cha; rc.InvocationID != a {
			t.Fatalf("round %d: %s's channel brought %s", i, a, rc.InvocationID)
		}
		w.recycle(cha)
		chb := w.add(b)
		if len(chb) != 0 {
			t.Fatalf("round %d: a recycled channel holds %d receipts", i, len(chb))
		}
		w.deliver(&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: a}}) // a's again: no one waits
		select {
		case rc := <-chb:
			t.Fatalf("round %d: %s's channel brought %s", i, b, rc.InvocationID)
		default:
		}
		w.deliver(&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: b}})
		if rc := <-chb; rc.InvocationID != b {
			t.Fatalf("round %d: %s's channel brought %s", i, b, rc.InvocationID)
		}
		w.recycle(chb)
	}
	// A channel still holding a receipt, or one of two receipts' (addEither), is not kept.
	ch := w.add("inv_full")
	ch <- wire.Receipt{}
	w.recycle(ch)
	either := w.addEither("inv_x", "inv_y")
	w.recycle(either)
	for range 10 {
		got := w.add("inv_next")
		if got == ch || got == either {
			t.Fatal("a channel not fit for the next caller was handed out")
		}
		w.remove("inv_next", got)
	}
}
