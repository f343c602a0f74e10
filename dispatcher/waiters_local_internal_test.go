package dispatcher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A receipt read from the log while a worker of this process claims its waiter
// is left to the worker: it does not wake the waiter, and is not decoded. A claim
// given up without a delivery (the append failed) wakes the waiter with the
// receipt seen meanwhile, read again from the log where it was seen (the bytes
// it was seen in are the projector's, which it uses again); a delivery
// consumes the claim; with a second worker claiming too, only the last claim
// given up wakes it.
func TestWaitersLeaveAClaimedReceiptToItsWorker(t *testing.T) {
	w := newWaiters(newReceiptIDs("salt"))
	inv := "inv_01claim"
	log := map[uint64]json.RawMessage{} // the receipts "stored", by sequence
	w.read = func(_ context.Context, of string, seq uint64, eventID string) (wire.Receipt, bool) {
		if of != inv || eventID != w.ids.of(inv) {
			t.Fatalf("read the receipt of %s with event id %q, want %s's, %q", of, eventID, inv, w.ids.of(inv))
		}
		var rc wire.Receipt
		data, ok := log[seq]
		return rc, ok && json.Unmarshal(data, &rc) == nil
	}
	seq := uint64(0)
	stored := func(result string) *eventlog.Stored {
		data, _ := json.Marshal(wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}, Result: result})
		seq++
		log[seq] = data
		return &eventlog.Stored{Event: wire.Event{ID: w.ids.of(inv), Type: wire.TypeReceipt, Data: bytes.Clone(data)},
			Subject: wire.ReceiptSubject("K"), Seq: seq}
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
	// waiters did not keep them.
	for i := range st.Data {
		st.Data[i] = ' '
	}
	quiet(ch, "seen while claimed")
	w.unclaim(context.Background(), inv, a)
	quiet(ch, "one claim of two given up")
	w.unclaim(context.Background(), inv, b)
	woken(ch, "from the log")

	ch = w.add(inv)
	c := w.claim(inv)
	w.seen(wire.DataStream, stored("from the log"))
	w.deliver(&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}, Result: "from the worker"})
	woken(ch, "from the worker")
	late := w.add(inv) // a new caller after the delivery: not the claimed waiter's
	w.unclaim(context.Background(), inv, c)
	quiet(late, "a claim given up after its delivery")
	w.seen(wire.DataStream, stored("from the log"))
	woken(late, "from the log")
}

// The waiters' read finds a receipt in the log where the projector saw it: in
// a pack of several (each event at the pack's sequence), or alone; not one
// under another event id. When the log holds nothing there, or cannot be read,
// it is the one the projection holds.
func TestReceiptReadAgainWhereItWasSeen(t *testing.T) {
	s := toolsService(t)
	ctx := context.Background()
	var ps []*eventlog.Pending
	var invs []string
	for i := range 8 {
		inv := fmt.Sprintf("inv_01read%d", i)
		ev, err := wire.NewEventWithID(s.waiters.ids.of(inv), time.Now(), wire.TypeReceipt, "engine:test",
			&wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "K"}, Result: fmt.Sprint("result ", i)})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.cfg.Log.AppendAsync(wire.ReceiptSubject("K"), ev, eventlog.Packed())
		if err != nil {
			t.Fatal(err)
		}
		ps, invs = append(ps, p), append(invs, inv)
	}
	packed := map[uint64]int{}
	seqs := make([]uint64, len(ps))
	for i, p := range ps {
		seq, err := eventlog.AwaitAck(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		packed[seq]++
		seqs[i] = seq
		rc, ok := s.readReceiptAt(ctx, invs[i], seq, s.waiters.ids.of(invs[i]))
		if !ok || rc.InvocationID != invs[i] || rc.Result != fmt.Sprint("result ", i) {
			t.Fatalf("receipt %d read again at %d as %+v (%v)", i, seq, rc, ok)
		}
		if _, ok := s.readReceiptAt(ctx, invs[i], seq, "rcpt_another"); ok {
			t.Fatalf("a receipt under another event id was found at %d", seq)
		}
	}
	if len(packed) == len(ps) {
		t.Fatalf("%d receipts appended together went out alone each: none was read from a pack", len(ps))
	}
	// Nothing at the sequence (or the log gone): the projection's, once it has
	// folded what it read (the projector read these receipts: it is what makes
	// the waiters read one again).
	if err := s.cfg.Projector.Settle(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	last, _ := s.cfg.Log.LastSeq(ctx, wire.DataStream)
	if rc, ok := s.readReceiptAt(ctx, invs[0], last+1, s.waiters.ids.of(invs[0])); !ok || rc.Result != "result 0" {
		t.Fatalf("past the end of the log, the receipt was read as %+v (%v); want the projection's", rc, ok)
	}
	if _, ok := s.readReceiptAt(ctx, "inv_01never", last+1, s.waiters.ids.of("inv_01never")); ok {
		t.Fatal("past the end of the log, a receipt of an invocation the projection does not hold was found")
	}
	if err := s.cfg.Log.Close(); err != nil {
		t.Fatal(err)
	}
	if rc, ok := s.readReceiptAt(ctx, invs[1], seqs[1], s.waiters.ids.of(invs[1])); !ok || rc.Result != "result 1" {
		t.Fatalf("with the log closed, the receipt was read as %+v (%v); want the projection's", rc, ok)
	}
	if _, ok := s.readReceiptAt(ctx, "inv_01never", seqs[1], s.waiters.ids.of("inv_01never")); ok {
		t.Fatal("with the log closed, a receipt of an invocation the projection does not hold was found")
	}
}
