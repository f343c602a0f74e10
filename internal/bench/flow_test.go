package bench

import (
	"context"
	"strings"
	"testing"
)

// TestFlowScenario runs the flow scenario small against a real node: a reference
// row and a flow row at each concurrency, the flow's notes giving a step's cost.
func TestFlowScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	ctx := context.Background()
	e, err := StartEnv(ctx, EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := Flow(ctx, e, 30, 60, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 4: %+v", len(res), res)
	}
	for i, r := range res {
		flow := i%2 == 1
		if r.Scenario != ScenarioFlow || r.Rate <= 0 || flow != strings.HasPrefix(r.Name, "3-step fn flow") {
			t.Errorf("result %d: %+v", i, r)
		}
		if flow && (r.Unit != "flows" || !strings.Contains(r.Note, "× the fn rate") || r.Values["rate_ratio"] <= 0) {
			t.Errorf("flow result %d: %+v", i, r)
		}
	}
}
