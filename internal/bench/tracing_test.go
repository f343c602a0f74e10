package bench

import (
	"context"
	"strings"
	"testing"
)

// TestTracingScenario runs the tracing scenario small: a node with tracing off
// and one with it on, interleaved, every call checked; the on rows give their
// ratio to off, the rows at 1 in flight their allocations per call.
func TestTracingScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two nodes")
	}
	res, err := Tracing(context.Background(), EnvConfig{Dir: t.TempDir()}, 16, 64, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 4: %+v", len(res), res)
	}
	for i, r := range res {
		on := i%2 == 1
		if r.Scenario != ScenarioTracing || r.Ops == 0 || strings.HasSuffix(r.Name, "tracing on") != on {
			t.Errorf("result %d: %+v", i, r)
		}
		if on && r.Values["off_ratio"] <= 0 {
			t.Errorf("result %d (on) has no ratio to off: %+v", i, r)
		}
		if i < 2 && r.Values["allocs_per_call"] <= 0 {
			t.Errorf("result %d (1 in flight) has no allocations per call: %+v", i, r)
		}
	}
}
