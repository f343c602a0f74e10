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
