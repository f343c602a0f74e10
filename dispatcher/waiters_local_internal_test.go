package dispatcher

import (
	"encoding/json"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A receipt read from the log while a worker of this process claims its waiter
// is left to the worker: it does not wake the waiter, and is not decoded. A claim
// given up without a delivery (the append failed) wakes the waiter with the
// receipt seen meanwhile (a copy of the bytes it was seen in, which the
// projector uses again); a delivery consumes the claim; with a second worker
// claiming too, only the last claim given up wakes it.
func TestWaitersLeaveAClaimedReceiptToItsWorker(t *testing.T) {
	w := newWaiters(newReceiptIDs("salt"))
	inv := "inv_01claim"
	stored := func(result string) *eventlog.Stored {
		data, _ := json.Marshal(wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}, Result: result})
		return &eventlog.Stored{Event: wire.Event{ID: w.ids.of(inv), Type: wire.TypeReceipt, Data: data}, Subject: wire.ReceiptSubject("K")}
	}
	quiet := func(ch chan wire.Receipt, when string) {
		t.Helper()
		select {
		case rc := <-ch:
			t.Fatalf("%s: woken with %+v", when, rc)
		default:
		}
	}
	woken := func(ch chan wire.Receipt, result string) {
		t.Helper()
		select {
		case rc := <-ch:
			if rc.InvocationID != inv || rc.Result != result {
				t.Fatalf("woken with %+v; want the result %q", rc, result)
			}
		default:
			t.Fatal("not woken")
		}
	}

	if w.claim("inv_nobody") != nil {
		t.Fatal("a claim of an invocation nobody waits for")
	}
	ch := w.add(inv)
	if id := w.eventID(inv); id != w.ids.of(inv) {
		t.Fatalf("eventID = %q, want %q", id, w.ids.of(inv))
	}
	a, b := w.claim(inv), w.claim(inv)
	st := stored("from the log")
	w.seen(wire.DataStream, st)
	// The projector reads its next packs into the bytes it was handed: the
	// waiters kept a copy.
	for i := range st.Data {
		st.Data[i] = ' '
	}
	quiet(ch, "seen while claimed")
	w.unclaim(inv, a)
	quiet(ch, "one claim of two given up")
	w.unclaim(inv, b)
	woken(ch, "from the log")

	ch = w.add(inv)
	c := w.claim(inv)
	w.seen(wire.DataStream, stored("from the log"))
	w.deliver(&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}, Result: "from the worker"})
	woken(ch, "from the worker")
	late := w.add(inv) // a new caller after the delivery: not the claimed waiter's
	w.unclaim(inv, c)
	quiet(late, "a claim given up after its delivery")
	w.seen(wire.DataStream, stored("from the log"))
	woken(late, "from the log")
}
