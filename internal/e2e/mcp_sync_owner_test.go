package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// logBuffer is a node's log, written by its goroutines and read by the test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// syncedRow reads key's row through GET /api/directory/{key}.
func syncedRow(t *testing.T, n *capdir.Node, key string) map[string]any {
	t.Helper()
	var row map[string]any
	if err := json.Unmarshal([]byte(waitRow(t, n, key, true)), &row); err != nil {
		t.Fatalf("row %s: %v", key, err)
	}
	return row
}

// A tool the upstream drops from its list and then lists again gets its row
// back with the owner's columns as the owner left them: a tool marked sensitive
// stays sensitive (a low-risk token is still refused, risk_ceiling:low<row:high)
// and a tool disabled stays disabled. An upstream that drops and re-adds a tool,
// hostile or restarting, cannot undo the owner's approval gate or disable switch.
// The node's log says which tool came back.
func TestMCPUpstreamToolBackKeepsTheOwnersColumns(t *testing.T) {
	srv, hs := mcptest.Server(t)
	logs := &logBuffer{}
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"up": {Name: "up", URL: hs.URL}}
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	waitRow(t, n, "UP_STRUCTURED", true) // the last of its tools: the sync is done
	low := mint(t, n, `{"sub":"agent-7","scope":{"keys":["UP_ECHO","UP_FAIL"]}}`)
	mustAdmit(t, dispatchWith(t, n, low.Token, "UP_ECHO", ""), "{}")

	// The owner puts UP_ECHO back whole with sensitive 1, and disables UP_FAIL.
	row := syncedRow(t, n, "UP_ECHO")
	row["sensitive"] = 1
	delete(row, "row_num")
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, n, "PUT", "/api/directory/UP_ECHO", string(b)); code != 200 {
		t.Fatalf("PUT UP_ECHO sensitive: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/UP_FAIL", `{"enabled":0}`); code != 200 {
		t.Fatalf("PATCH UP_FAIL enabled 0: %d %s", code, body)
	}
	mustDeny(t, dispatchWith(t, n, low.Token, "UP_ECHO", ""), 403, "risk_ceiling:low<row:high")

	// The upstream drops both tools (list_changed), then lists them again.
	srv.RemoveTools("echo", "fail")
	waitRow(t, n, "UP_ECHO", false)
	waitRow(t, n, "UP_FAIL", false)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(string(req.Params.Arguments)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("boom")
			r.IsError = true
			return r, nil
		})

	echo, fail := syncedRow(t, n, "UP_ECHO"), syncedRow(t, n, "UP_FAIL")
	if echo["sensitive"] != 1.0 || echo["enabled"] != 1.0 || !strings.Contains(echo["content"].(string), `# SOURCE: mcp upstream="up"`) {
		t.Fatalf("UP_ECHO back: %v; want sensitive 1, enabled 1, of the upstream", echo)
	}
	if fail["enabled"] != 0.0 || fail["sensitive"] != 0.0 {
		t.Fatalf("UP_FAIL back: %v; want enabled 0", fail)
	}
	mustDeny(t, dispatchWith(t, n, low.Token, "UP_ECHO", ""), 403, "risk_ceiling:low<row:high")
	if a := dispatchWith(t, n, low.Token, "UP_FAIL", ""); a.Ran || a.OK {
		t.Fatalf("a disabled row back from the upstream ran: %d %s", a.code, a.body)
	}
	// The sync logs once its rows are visible: a moment after they are read.
	for _, key := range []string{"UP_ECHO", "UP_FAIL"} {
		line := `msg="mcp upstream: a tool is back; its row keeps the owner's columns (enabled, sensitive, …) of its last version" upstream=up tool=` +
			strings.ToLower(key[3:]) + " key=" + key + " version_seq="
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), line); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no log line says %s came back:\n%s", key, logs.String())
			}
		}
	}
}
