package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/internal/nodetest"
)

// A hostile model answers one request with more tool calls than the agent runner
// takes at once: the call fails saying so, and none of them runs. Before the
// bound, each was a step with a request event and a receipt in the log (past the
// tree's 1,024, each refused, but still recorded), and a 4 MiB answer holds tens
// of thousands.
func TestAgentModelCallingTooManyToolsAtOnceRunsNone(t *testing.T) {
	n := agentrunner.DefaultMaxToolCalls + 72
	calls := toolCalls(n, "TALLY")
	model := agenttest.NewServer(t, agenttest.Reply{ToolCalls: calls}, agenttest.Answer("done"))
	node, fns := startComposeNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, node,
		rowJSON(map[string]any{"key": "TALLY", "type": "fn", "target": "count", "category": "tools", "content": "# WHAT: counts its calls\n[\"$1\"]"}),
		rowJSON(map[string]any{"key": "HELPER", "type": "agent", "target": "gpt-test", "allowed_categories": "tools", "content": "# WHAT: calls tools\nUse the tools."}),
	)
	b, _ := json.Marshal(map[string]string{"key": "HELPER", "body": "go"})
	_, out := nodetest.Do(t, node, "POST", "/api/dispatch", string(b))
	var a flowAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch: %v: %s", err, out)
	}
	want := fmt.Sprintf("ERR:agent:tool_calls:%d>%d", n, agentrunner.DefaultMaxToolCalls)
	if a.OK || a.Result != want {
		t.Fatalf("agent answered ok=%v %q, want %q", a.OK, a.Result, want)
	}
	if got := fns.count.Load(); got != 0 {
		t.Errorf("%d tool calls ran, want none", got)
	}
	if tr := receiptTree(t, node, a.Proof.InvocationID); len(tr.Children) != 0 {
		t.Errorf("agent receipt lists %d children, want none", len(tr.Children))
	}
	if got := len(model.Requests()); got != 1 {
		t.Errorf("%d model requests, want 1", got)
	}
	code, body := nodetest.Do(t, node, "GET", "/api/receipts?key=TALLY&limit=10", "")
	var rcs struct {
		Receipts []json.RawMessage `json:"receipts"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &rcs) != nil || len(rcs.Receipts) != 0 {
		t.Errorf("TALLY's receipts: HTTP %d %s, want none", code, body)
	}
}

// A hostile model calls, in one answer, a tool whose upstream answers the most a
// tool may (1 MiB) again and again: the conversation it would be sent back grows by
// a result cap per call, 896 MiB over a call's tool calls. Past the request cap
// (16 MiB) the call fails saying so, no more tools run, and nothing more is sent.
func TestAgentConversationPastRequestCapStops(t *testing.T) {
	page := strings.Repeat("p", 1<<20-len("HTTP 200:"))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page) }))
	t.Cleanup(up.Close)
	const n = 24
	calls := toolCalls(n, "PAGE")
	model := agenttest.NewServer(t, agenttest.Reply{ToolCalls: calls}, agenttest.Answer("done"))
	node, _ := startComposeNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, node,
		rowJSON(map[string]any{"key": "PAGE", "type": "http", "target": "GET " + up.URL + "/page", "category": "tools", "content": "# WHAT: a page of 1 MiB"}),
		rowJSON(map[string]any{"key": "HELPER", "type": "agent", "target": "gpt-test", "allowed_categories": "tools", "content": "# WHAT: reads pages\nRead the pages."}),
	)
	b, _ := json.Marshal(map[string]string{"key": "HELPER", "body": "go"})
	_, out := nodetest.Do(t, node, "POST", "/api/dispatch", string(b))
	var a flowAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch: %v: %.300s", err, out)
	}
	want := fmt.Sprintf("ERR:agent:request_too_large:%d", agentrunner.DefaultMaxRequestBytes)
	if a.OK || a.Result != want {
		t.Fatalf("agent answered ok=%v %.200q, want %q", a.OK, a.Result, want)
	}
	if got := len(model.Requests()); got != 1 {
		t.Errorf("%d model requests, want 1: the conversation past the cap is not sent", got)
	}
	if tr := receiptTree(t, node, a.Proof.InvocationID); len(tr.Children) != agentrunner.DefaultMaxRequestBytes>>20 {
		t.Errorf("%d tools ran, want %d: the one whose result takes the conversation past the cap is the last", len(tr.Children), agentrunner.DefaultMaxRequestBytes>>20)
	}
}

// toolCalls is n calls of the tool name, in one model answer.
func toolCalls(n int, name string) []agenttest.ToolCall {
	calls := make([]agenttest.ToolCall, n)
	for i := range calls {
		calls[i] = agenttest.ToolCall{ID: fmt.Sprintf("c%d", i), Name: name, Arguments: `{"args":"x"}`}
	}
	return calls
}
