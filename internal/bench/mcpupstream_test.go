package bench

import (
	"context"
	"strings"
	"testing"
)

// TestMCPUpstreamScenario runs the mcp-upstream scenario small against a real
// node: the upstream called directly and through capdir's /mcp, every call
// checked, the overhead in the note.
func TestMCPUpstreamScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	ctx := context.Background()
	e, err := StartEnv(ctx, EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := MCPUpstream(ctx, e, 30, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Ops != 30 || res[1].Ops != 30 || res[0].Scenario != ScenarioMCPUpstream ||
		!strings.Contains(res[1].Note, "over calling the upstream directly") {
		t.Fatalf("results: %+v", res)
	}
}
