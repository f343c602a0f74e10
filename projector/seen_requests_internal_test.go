package projector

import (
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The requests read are decoded only when a caller asks, and a commit forgets
// what it folded whether or not it was decoded: asked between reads and
// commits in any order, the answers are those of every request read being
// recorded as it was read, also when a second follower reads again what the
// first read and did not commit.
func TestSeenRequestsDecodedWhenAsked(t *testing.T) {
	r := newSeenRequests()
	see := func(seq uint64, inv string) {
		t.Helper()
		ev, err := wire.NewEvent(time.Unix(0, 0), wire.TypeInvocationRequested, "owner", wire.InvocationRequest{InvocationID: inv, Key: "K", Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		r.see(&eventlog.Stored{Event: ev, Stream: wire.DataStream, Subject: wire.RequestSubject("K"), Seq: seq})
	}
	// A request the fold skips (its key is not its subject's) is not recorded.
	bad, err := wire.NewEvent(time.Unix(0, 0), wire.TypeInvocationRequested, "owner", wire.InvocationRequest{InvocationID: "inv_bad", Key: "OTHER"})
	if err != nil {
		t.Fatal(err)
	}
	want := func(id string, seq uint64, ok bool) {
		t.Helper()
		if got := r.before(id, seq); got != ok {
			t.Fatalf("before(%s, %d) = %v, want %v", id, seq, got, ok)
		}
	}
	noneHeld := func(when string) {
		t.Helper()
		if len(r.ids) != 0 || len(r.order) != 0 || r.decoded != 0 {
			t.Fatalf("%s: ids %v, %d held, %d decoded", when, r.ids, len(r.order), r.decoded)
		}
	}
	see(1, "inv_a")
	see(2, "inv_b")
	if len(r.ids) != 0 {
		t.Fatalf("decoded before anyone asked: %v", r.ids)
	}
	want("inv_a", 2, false) // its request at 1 is not committed
	want("inv_a", 1, true)
	see(3, "inv_a")
	r.see(&eventlog.Stored{Event: bad, Stream: wire.DataStream, Subject: wire.RequestSubject("K"), Seq: 4})
	see(5, "inv_c")
	r.committed(2) // inv_a's first and inv_b's, decoded; none after
	want("inv_b", 6, true)
	want("inv_a", 3, true)
	want("inv_a", 4, false) // its second, at 3
	want("inv_bad", 6, true)
	r.committed(4)
	see(6, "inv_d")
	r.committed(5) // inv_c decoded, inv_d not
	want("inv_c", 7, true)
	want("inv_d", 7, false)
	r.committed(6)
	want("inv_d", 7, true)
	noneHeld("after every commit")

	// A follower that stopped before committing what it read (a Run that
	// ended) leaves its requests; the next reads them again after them. A
	// commit forgets every request up to it, wherever it is held (the bytes of
	// each are its follower's, good only until their batch commits).
	see(8, "inv_e")
	see(9, "inv_f")
	want("inv_e", 9, false) // decodes both
	see(7, "inv_g")         // read again from 7
	see(8, "inv_e")
	see(9, "inv_f")
	r.committed(8)
	for _, q := range r.order {
		if q.seq <= 8 {
			t.Fatalf("after the commit of 8, the request at %d is still held", q.seq)
		}
	}
	want("inv_e", 10, true)
	want("inv_f", 10, false)
	r.committed(9)
	want("inv_f", 10, true)
	noneHeld("after the commit of everything read again")
}

// A pack is handed over event by event: until its last event is read, the
// pack is not read (a request under an id may be among its events still to
// come), though Read counts it, so that a receipt among its events already
// read is waited for.
func TestSeenRequestsPackReadWhole(t *testing.T) {
	r := newSeenRequests()
	part := func(seq uint64, part, parts int, typ, inv string) {
		t.Helper()
		ev, err := wire.NewEvent(time.Unix(0, 0), typ, "owner", wire.InvocationRequest{InvocationID: inv, Key: "K", Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		r.see(&eventlog.Stored{Event: ev, Stream: wire.DataStream, Subject: wire.RequestSubject("K"), Seq: seq, Part: part, Parts: parts})
	}
	part(1, 0, 1, wire.TypeInvocationRequested, "inv_a") // a message of one event
	r.committed(1)
	part(2, 0, 3, wire.TypeInvocationRequested, "inv_b")
	if r.hasRead(2) || r.before("inv_c", 3) {
		t.Fatal("the pack at 2 counts as read after its first event of three")
	}
	if r.touchedUpTo() != 2 || !r.hasRead(1) || !r.before("inv_a", 2) {
		t.Fatalf("after the first event of the pack at 2: touched %d, read %d", r.touchedUpTo(), r.read)
	}
	part(2, 1, 3, wire.TypeInvocationRequested, "inv_c")
	if r.before("inv_c", 3) {
		t.Fatal("inv_c before 3 with two of the pack's three events read")
	}
	part(2, 2, 3, wire.TypeReceipt, "inv_a")
	if !r.hasRead(2) || r.before("inv_c", 3) || !r.before("inv_d", 3) || r.before("inv_b", 3) {
		t.Fatal("the pack at 2 read whole: inv_b and inv_c are pending before 3, inv_d is not")
	}
	// Read again by the next follower, from its first event: what was read
	// whole stays read.
	part(2, 0, 3, wire.TypeInvocationRequested, "inv_b")
	if !r.hasRead(2) {
		t.Fatal("the pack at 2 read again from its first event is no longer read")
	}
}
