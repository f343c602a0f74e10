package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/internal/nodetest"
)

// A receipt's tool result on the fast path is the one the SDK writes for the
// same call, byte for byte once each answer's own invocation id and trace are
// set aside, for a result of HTML characters, quotes, line separators and
// multi-byte text; the SDK's client reads from it the text the receipt holds.
func TestReceiptResultAsTheSDKWritesIt(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	cs := connect(t, n, owner(), "", nil)
	defer cs.Close()
	const name = "<b>&amp;</b> \u2028\"q\" \\ é 世界"
	res := call(t, cs, "GREET", map[string]any{"args": name})
	if res.IsError || text(res) != "Hello, "+name+"!" {
		t.Fatalf("GREET through the SDK's client: isError=%v %q", res.IsError, text(res))
	}
	if got := receipt(t, n, invocationID(t, res)).Result; got != "Hello, "+name+"!" {
		t.Errorf("the receipt holds %q, the tool result %q", got, text(res))
	}

	arg, _ := json.Marshal(map[string]string{"args": name})
	headers := []string{"x-terminal-key", nodetest.Key, "Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", "2025-06-18"}
	code, h, fast := post(t, n, "", toolsCall("5", "GREET", string(arg), ""), headers...)
	if code != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("fast path: %d %s %q, want a 200 application/json answer", code, h.Get("Content-Type"), fast)
	}
	code, h, slow := post(t, n, "", toolsCall("5", "GREET", string(arg), `"x":0`), headers...)
	if code != 200 || h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("SDK: %d %s %q, want the SDK's stream", code, h.Get("Content-Type"), slow)
	}
	if a, b := setAside(t, fast), setAside(t, sseData(t, slow)); a != b {
		t.Errorf("fast path:\n%s\nSDK:\n%s", a, b)
	}
}

// setAside replaces a tool result's invocation id and trace by placeholders.
func setAside(t *testing.T, answer string) string {
	t.Helper()
	var r struct {
		Result struct {
			Meta              map[string]string `json:"_meta"`
			StructuredContent mcp.CallResult    `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(answer), &r); err != nil {
		t.Fatalf("%v: %s", err, answer)
	}
	id, trace := r.Result.Meta[mcp.MetaInvocationID], r.Result.StructuredContent.Proof.Trace
	if id == "" || trace == "" {
		t.Fatalf("no invocation id or trace in %s", answer)
	}
	return strings.NewReplacer(id, "INVOCATION", trace, "TRACE").Replace(answer)
}
