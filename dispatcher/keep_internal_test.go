package dispatcher

import "testing"

// A tick keeps every request a worker holds in progress, one taken just before
// it included: the ack wait runs from when the server sent the request, so one
// left to the next tick could hear nothing for two thirds of it. A slot that
// holds nothing is left alone.
func TestATickKeepsEveryHeldRequestInProgress(t *testing.T) {
	held := make([]heldSlot, 3)
	taken, earlier := &heldMsg{}, &heldMsg{}
	held[0].hold(earlier)
	keepHeld(held)
	held[2].hold(taken)
	keepHeld(held)
	if earlier.progress.Load() != 2 || taken.progress.Load() != 1 {
		t.Fatalf("InProgress sent %d times for a request held over two ticks (want 2), %d for one taken just before the second (want 1)", earlier.progress.Load(), taken.progress.Load())
	}
	held[0].hold(nil)
	keepHeld(held)
	if earlier.progress.Load() != 2 || taken.progress.Load() != 2 {
		t.Fatalf("after the first was given back: %d and %d InProgress, want 2 and 2", earlier.progress.Load(), taken.progress.Load())
	}
}
