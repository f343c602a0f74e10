package api

import (
	"slices"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// A dispatch's receipt stays on the stack of the handler that answers it: an
// error that names it (a token refused) keeps a copy of its own.
func TestDispatchReceiptStaysOnTheStack(t *testing.T) {
	moved := allocstest.MovedToHeap(t, ".")
	if slices.Contains(moved["Server.dispatch"], "rc") {
		t.Errorf("Server.dispatch moves its receipt to the heap (it moves %v)", moved["Server.dispatch"])
	}
}
