package dispatcher

import "testing"

// A call this node answers under an id derived from its event id skips the
// notice of its own client's receipt there, and marks the id that client's
// own; another client's request under the same id (another sender took it
// first) is told as ever, and marks nothing.
func TestCallSkipsOnlyItsOwnClientsNotice(t *testing.T) {
	c := newCalls(4, false)
	rp := &replyingCall{client: "c2"}
	c.replying.Store("inv_x", rp)
	if got := c.noticeTo("c1", "inv_x"); got != "c1" || rp.own.Load() {
		t.Fatalf("another client's receipt under the call's id: notice to %q, own %v; want c1 told, nothing marked", got, rp.own.Load())
	}
	if got := c.noticeTo("c2", "inv_x"); got != "" || !rp.own.Load() {
		t.Fatalf("the call's client's receipt: notice to %q, own %v; want no notice, the id marked its own", got, rp.own.Load())
	}
	if got := c.noticeTo("c2", "inv_y"); got != "c2" {
		t.Fatalf("an id no call answers: notice to %q, want c2", got)
	}
}

// A packed call's claim on its id is its own until it releases it: another
// call under the id neither takes it nor ends it, whatever that call does with
// its own entries (it replaces the id's replying entry and removes it again,
// as a call answered at once does), and a node that does not pack calls grants
// none.
func TestPackingClaimIsHeldUntilItsCallReleasesIt(t *testing.T) {
	c := newCalls(4, true)
	first, second, third := &replyingCall{client: "c1"}, &replyingCall{client: "c1"}, &replyingCall{client: "c2"}
	c.replying.Store("inv_x", first)
	if !c.claimPacking("inv_x", first) {
		t.Fatal("the first call under inv_x may not pack")
	}
	// A second call under the id, answered at once.
	c.replying.Store("inv_x", second)
	if c.claimPacking("inv_x", second) {
		t.Fatal("a second call under inv_x may pack while the first is in flight")
	}
	c.releasePacking("inv_x", second)
	c.replying.CompareAndDelete("inv_x", second)
	if c.claimPacking("inv_x", third) {
		t.Fatal("a call under inv_x may pack after another call under it ended, while the first is in flight")
	}
	if !c.claimPacking("inv_y", third) {
		t.Fatal("a call under another id may not pack")
	}
	c.releasePacking("inv_x", first)
	if !c.claimPacking("inv_x", third) {
		t.Fatal("no call may pack under inv_x once the first released it")
	}
	if newCalls(4, false).claimPacking("inv_x", first) {
		t.Fatal("a node that does not pack calls granted a claim")
	}
}
