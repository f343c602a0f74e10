package e2e_test

import (
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
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

// A token scoped to an agent row and one tool row (TOOL_A) but not another row of
// the agent's allowed_categories (TOOL_B): the model is offered TOOL_A alone; a
// call of TOOL_B is answered ERR:agent:tool_not_offered and invokes nothing,
// while TOOL_A runs as a step with its own receipt (actor token:<sub>, parent the
// agent's invocation). The owner is offered both. A flow step to TOOL_B under the
// same scope is refused ERR:flow:refused:<step>:scope, nothing run: the refusal
// does not name TOOL_B, a row the token may not see (its step receipt, the
// owner's, does).
func TestAgentToolsOutsideTheTokenScope(t *testing.T) {
	model := agenttest.NewServer(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{
			{Name: "TOOL_B", Arguments: `{"args":"b"}`},
			{Name: "TOOL_A", Arguments: `{"args":"ada"}`},
		}},
		agenttest.Answer("done"),
		agenttest.Answer("owner done"),
	)
	n, fns := startComposeNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, n,
		rowJSON(map[string]any{"key": "TOOL_A", "type": "fn", "target": "upper", "category": "tools", "content": "# WHAT: upper-cases a name\n[\"$1\"]"}),
		rowJSON(map[string]any{"key": "TOOL_B", "type": "fn", "target": "count", "category": "tools", "content": "# WHAT: counts its calls\n[\"$1\"]"}),
		rowJSON(map[string]any{
			"key": "HELPER", "type": "agent", "target": "gpt-test", "category": "agents", "allowed_categories": "tools",
			"content": "# WHAT: answers questions about names\nAnswer in one line.",
		}),
		flowRowJSON("FLOW_AB", "TOOL_A: $1 > TOOL_B: $PREV"),
	)
	tok := mint(t, n, `{"sub":"agent-7","scope":{"keys":["HELPER","TOOL_A","FLOW_AB"]}}`)

	parent := mustAdmit(t, dispatchWith(t, n, tok.Token, "HELPER", "Who is ada?"), "done")
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := reqs[0].ToolNames(); !reflect.DeepEqual(got, []string{"TOOL_A"}) {
		t.Errorf("tools offered to the token holder %q, want only TOOL_A", got)
	}
	res := reqs[1].ToolResults()
	if got := res["call_1"]; !strings.HasPrefix(got, "ERR:agent:tool_not_offered:TOOL_B") {
		t.Errorf("tool message for TOOL_B %q, want ERR:agent:tool_not_offered:TOOL_B", got)
	}
	if got := res["call_2"]; got != "ADA" {
		t.Errorf("tool message for TOOL_A %q, want ADA", got)
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), tok.Token) {
			t.Error("the model was sent the token")
		}
	}
	if c := fns.count.Load(); c != 0 {
		t.Fatalf("TOOL_B ran %d times", c)
	}
	stepB, stepA := dispatcher.StepInvocationID(parent, "tool-1"), dispatcher.StepInvocationID(parent, "tool-2")
	tr := receiptTree(t, n, parent)
	if tr.Actor != "token:agent-7" || !reflect.DeepEqual(tr.Children, []string{stepA}) || len(tr.Steps) != 1 {
		t.Fatalf("agent receipt actor %q children %q, steps %d", tr.Actor, tr.Children, len(tr.Steps))
	}
	if st := tr.Steps[0]; st.Key != "TOOL_A" || st.Parent != parent || st.Actor != "token:agent-7" || st.Body != "ada" ||
		st.Result != "ADA" || st.Status != wire.StatusProvenMaterialResult {
		t.Errorf("TOOL_A step receipt %+v", st.Receipt)
	}
	if rcs := nodetest.Receipts(t, n.Log(), stepB); len(rcs) != 0 {
		t.Errorf("receipts for the tool not offered: %+v", rcs)
	}
	for id, rs := range stepRequests(t, n.Log()) {
		for _, r := range rs {
			if r.Key == "TOOL_B" {
				t.Errorf("a step request for TOOL_B: %s", id)
			}
		}
	}

	// The owner is offered both.
	if a := dispatchOK(t, n, "HELPER", "Who is ada?"); a.Result != "owner done" {
		t.Fatalf("owner's agent answered %+v", a)
	}
	if reqs = model.Requests(); len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	} else if got := reqs[2].ToolNames(); !reflect.DeepEqual(got, []string{"TOOL_A", "TOOL_B"}) {
		t.Errorf("tools offered to the owner %q, want TOOL_A and TOOL_B", got)
	}

	// A flow step outside the scope is refused, and nothing runs for it.
	f := dispatchWith(t, n, tok.Token, "FLOW_AB", "ada")
	if f.OK || f.Result != "ERR:flow:refused:2:scope" {
		t.Fatalf("flow answered %d %s", f.code, f.body)
	}
	if c := fns.count.Load(); c != 0 {
		t.Fatalf("TOOL_B ran %d times", c)
	}
	ftr := receiptTree(t, n, f.Proof.InvocationID)
	if len(ftr.Steps) != 2 || ftr.Steps[0].Result != "ADA" {
		t.Fatalf("flow receipt tree %+v", ftr)
	}
	if st := ftr.Steps[1]; st.Key != "TOOL_B" || st.Ran || st.Status != wire.StatusRefusedScope || st.Result != "scope:TOOL_B" ||
		st.Actor != "token:agent-7" || st.Parent != f.Proof.InvocationID {
		t.Errorf("refused step receipt %+v", st.Receipt)
	}
}

// schemaLookupRow is an http row with an object input_schema of two properties,
// one an enum, mapped onto $1 and $2 of its target.
func schemaLookupRow(key, upstream string) map[string]any {
	return map[string]any{
		"key": key, "type": "http", "target": "GET " + upstream + "/find?q=$1&mode=$2", "category": "tools",
		"input_schema": `{"type":"object","properties":{"q":{"type":"string"},"mode":{"type":"string","enum":["fast","deep"]}},"required":["q","mode"]}`,
		"content":      "# WHAT: Find something.\n# ARGS: $1=q | $2=mode",
	}
}

// An agent's tool call on a row with an object input_schema runs with the
// model's arguments object as the call's arguments, as POST /api/dispatch runs an
// object body: the upstream gets each property in its place, the enum holds.
func TestAgentToolCallOnASchemaRowSendsTheArgumentsObject(t *testing.T) {
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("found " + r.URL.RawQuery)) })
	model := agenttest.NewServer(t,
		agenttest.Call("FIND", `{"q":"hello","mode":"deep"}`),
		agenttest.Answer("done"),
	)
	n, _ := startComposeNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, n, rowJSON(schemaLookupRow("FIND", up.URL)), rowJSON(map[string]any{
		"key": "FINDER", "type": "agent", "target": "gpt-test", "allowed_categories": "tools",
		"content": "# WHAT: finds things\nFind what is asked.",
	}))
	a := dispatchOK(t, n, "FINDER", "find hello, deeply")
	if !a.OK || a.Result != "done" {
		t.Fatalf("agent answered %+v", a)
	}
	if got := up.Queries(); !reflect.DeepEqual(got, []string{"q=hello&mode=deep"}) {
		t.Fatalf("the upstream got %q, want q=hello&mode=deep once", got)
	}
	st := receiptTree(t, n, a.Proof.InvocationID).Steps
	if len(st) != 1 || st[0].Status != wire.StatusProvenMaterialResult || st[0].Body != "hello|deep" {
		t.Fatalf("tool step receipts %+v", st)
	}
}
