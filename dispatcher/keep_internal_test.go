package dispatcher

import (
	"testing"

	"github.com/capdir/capdir/eventlog"
)

// progressCounter is a held request that counts the InProgress sent for it.
type progressCounter struct {
	eventlog.Msg
	n int
}

func (m *progressCounter) InProgress() error { m.n++; return nil }

// A tick keeps every request a worker holds in progress, one taken just before
// it included: the ack wait runs from when the server sent the request, so one
// left to the next tick could hear nothing for two thirds of it. A slot that
// holds nothing is left alone.
func TestATickKeepsEveryHeldRequestInProgress(t *testing.T) {
	held := make([]heldSlot, 3)
	taken, earlier := &progressCounter{}, &progressCounter{}
	held[0].hold(earlier)
	keepHeld(held)
	held[2].hold(taken)
	keepHeld(held)
	if earlier.n != 2 || taken.n != 1 {
		t.Fatalf("InProgress sent %d times for a request held over two ticks (want 2), %d for one taken just before the second (want 1)", earlier.n, taken.n)
	}
	held[0].hold(nil)
	keepHeld(held)
	if earlier.n != 2 || taken.n != 2 {
		t.Fatalf("after the first was given back: %d and %d InProgress, want 2 and 2", earlier.n, taken.n)
	}
}
