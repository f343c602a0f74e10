package dispatcher

import (
	"slices"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// What an invocation's hot path keeps on its stack, as the compiler reports
// it: the request a caller waits on (InvokeWait's, which PrepareRequest does
// not keep), the worker's receipt (the draft's, not a copy of it) and what the
// projection told the worker (its row is the cache's, not a copy the gate's
// input points at). Each, moved to the heap, was an allocation of a few
// hundred bytes every call.
func TestInvocationValuesStayOnTheStack(t *testing.T) {
	moved := allocstest.MovedToHeap(t, ".")
	for fn, locals := range map[string][]string{
		"Service.InvokeWait": {"req"},
		"Service.handle":     {"rc", "g"},
	} {
		for _, v := range locals {
			if slices.Contains(moved[fn], v) {
				t.Errorf("%s moves %s to the heap (it moves %v)", fn, v, moved[fn])
			}
		}
	}
	if len(moved["Service.handle"]) == 0 {
		t.Fatal("the compiler's report named no local of Service.handle: is the report read right?")
	}
}
