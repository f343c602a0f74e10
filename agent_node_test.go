package capdir_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/eventlog/wire"
)

// rowJSON is a row with the given columns.
func rowJSON(cols map[string]any) string {
	b, _ := json.Marshal(cols)
	return string(b)
}

// An agent row run by a real node against the fake model server: two includes
// composed into the system prompt, the rows of its category offered as tools (not
// a hidden, a disabled or another category's row), one tool call run as a step
// with its own receipt, tokens and cost on the agent's receipt.
func TestAgentRowWithIncludesAndAToolCall(t *testing.T) {
	model := agenttest.NewServer(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{Name: "LOOKUP", Arguments: `{"args":"ada"}`}}, Usage: agenttest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		agenttest.Reply{Content: "Ada is ADA.", Usage: agenttest.Usage{PromptTokens: 200, CompletionTokens: 20}},
	)
	n, _ := startComposeNode(t, func(c *capdir.Config) {
		c.AgentProviders = []string{"*=" + model.URL}
		c.AgentPrices = []string{"gpt-test=2/8"}
	})
	putRows(t, n,
		rowJSON(map[string]any{"key": "BLOCK_A", "type": "agent", "content": "# WHAT: a prompt block\nYou are careful.", "planner_visible": 0}),
		rowJSON(map[string]any{"key": "BLOCK_B", "type": "agent", "content": "# WHAT: another prompt block\nBe brief.", "planner_visible": 0}),
		rowJSON(map[string]any{"key": "LOOKUP", "type": "fn", "target": "upper", "category": "tools", "content": "# WHAT: upper-cases a name\n# WHEN_TO_USE: a name must be shouted\n[\"$1\"]"}),
		rowJSON(map[string]any{"key": "HIDDEN", "type": "fn", "target": "echo", "category": "tools", "planner_visible": 0, "content": "# WHAT: hidden from planners"}),
		rowJSON(map[string]any{"key": "OFF", "type": "fn", "target": "echo", "category": "tools", "enabled": 0, "content": "# WHAT: disabled"}),
		rowJSON(map[string]any{"key": "ELSEWHERE", "type": "fn", "target": "echo", "category": "misc", "content": "# WHAT: another category"}),
		rowJSON(map[string]any{
			"key": "HELPER", "type": "agent", "target": "gpt-test", "category": "agents",
			"includes": "BLOCK_A, BLOCK_B", "allowed_categories": "tools",
			"content": "# WHAT: answers questions about names\nAnswer in one line.",
		}),
	)
	a := dispatchOK(t, n, "HELPER", "Who is ada?")
	if !a.OK || !a.Ran || a.Result != "Ada is ADA." {
		t.Fatalf("agent answered %+v", a)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got, want := reqs[0].System(), "You are careful.\n\nBe brief.\n\nAnswer in one line."; got != want {
		t.Errorf("system prompt %q, want %q", got, want)
	}
	if got := reqs[0].ToolNames(); !reflect.DeepEqual(got, []string{"LOOKUP"}) {
		t.Errorf("tools offered %q, want only LOOKUP", got)
	}
	if got := reqs[1].ToolResults(); len(got) != 1 || got["call_1"] != "ADA" {
		t.Errorf("tool results sent back %q", got)
	}

	parent := a.Proof.InvocationID
	tr := receiptTree(t, n, parent)
	tool := dispatcher.StepInvocationID(parent, "tool-1")
	if !reflect.DeepEqual(tr.Children, []string{tool}) || len(tr.Steps) != 1 {
		t.Fatalf("agent receipt children %q, steps %d", tr.Children, len(tr.Steps))
	}
	if tr.PromptTokens != 300 || tr.CompletionTokens != 30 {
		t.Errorf("tokens %d/%d, want 300/30", tr.PromptTokens, tr.CompletionTokens)
	}
	if want := (300*2 + 30*8) / 1e6; math.Abs(tr.CostUSD-want) > 1e-12 {
		t.Errorf("cost %v, want %v", tr.CostUSD, want)
	}
	st := tr.Steps[0]
	if st.Key != "LOOKUP" || st.Parent != parent || st.Trace != a.Trace || st.Body != "ada" || st.Result != "ADA" ||
		st.Status != wire.StatusProvenMaterialResult || st.PromptTokens != 0 || st.CostUSD != 0 {
		t.Errorf("tool step receipt %+v", st.Receipt)
	}
}

// TODO(tokens): once the node verifies capability tokens (gate.Config.Tokens),
// dispatch an agent row with a token whose scope names the agent and one tool
// row but not a second row of the agent's allowed_categories, and check that the
// model is offered only the row in scope, that a tool call naming the other is
// answered ERR:agent:tool_not_offered without a step, and that a flow step to a
// row outside the scope is refused scope:<KEY> on its receipt.
func TestAgentToolsOutsideTheTokenScope(t *testing.T) {
	t.Skip("the node does not verify capability tokens yet (gate.Config.Tokens is off); " +
		"will check that a tool outside the caller's token scope is neither offered nor callable")
}
