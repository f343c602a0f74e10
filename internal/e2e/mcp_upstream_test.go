package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// mcpRowJSON is a row of runner mcp on target.
func mcpRowJSON(key, target string) string {
	b, _ := json.Marshal(map[string]any{"key": key, "type": "fn", "runner": "mcp", "target": target, "content": "# WHAT: " + key + " (test row)"})
	return string(b)
}

// Rows of runner mcp call the tools of the node's upstream MCP server (the Go
// SDK's server over streamable HTTP) through POST /api/dispatch: the tool's text
// is the answer, isError is the tool_error literal, a tool or upstream that is
// not there a literal naming it, an upstream that is down the unreachable one.
func TestMCPUpstreamRowsDispatch(t *testing.T) {
	_, hs := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{
			"up":   {Name: "up", URL: hs.URL},
			"down": {Name: "down", URL: "http://127.0.0.1:1/mcp"},
		}
	})
	putRows(t, n,
		mcpRowJSON("HAND_ECHO", "up/echo"), mcpRowJSON("HAND_FAIL", "up/fail"), mcpRowJSON("HAND_NOPE", "up/nope"),
		mcpRowJSON("ELSEWHERE", "nobody/echo"), mcpRowJSON("DOWN_ECHO", "down/echo"))
	for _, tc := range []struct{ key, body, want string }{
		{"HAND_ECHO", "hello", `"result":"{\"args\":\"hello\"}"`},
		{"HAND_FAIL", "", `"result":"ERR:mcp:up:tool_error:boom"`},
		{"HAND_NOPE", "", `"result":"ERR:mcp:up:protocol:`},
		{"ELSEWHERE", "", `"result":"ERR:mcp:unknown_upstream:nobody"`},
		{"DOWN_ECHO", "", `"result":"ERR:mcp:down:unreachable:`},
	} {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"`+tc.key+`","body":"`+tc.body+`"}`)
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s; want %s", tc.key, code, body, tc.want)
		}
	}
}

// A row of runner mcp is a tool of capdir's own /mcp (a Go SDK client calls it
// and gets the upstream tool's text) and a step of a flow.
func TestMCPUpstreamRowThroughMCPAndFlow(t *testing.T) {
	_, hs := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"up": {Name: "up", URL: hs.URL}}
	})
	putRows(t, n, mcpRowJSON("HAND_ECHO", "up/echo"), flowRowJSON("VIA_FLOW", "HAND_ECHO: $1"))

	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-mcp-upstream-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "HAND_ECHO", Arguments: map[string]any{"args": "via-mcp"}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), `{"args":"via-mcp"}`) {
		t.Fatalf("capdir /mcp tools/call HAND_ECHO: %v %+v %q", err, res, mcpText(res))
	}
	code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"VIA_FLOW","body":"via-flow"}`)
	if !strings.Contains(body, `{\"args\":\"via-flow\"}`) {
		t.Fatalf("flow step of runner mcp: %d %s", code, body)
	}
}

// keyTransport sends the owner key with every request.
type keyTransport struct{}

func (keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-terminal-key", nodetest.Key)
	return http.DefaultTransport.RoundTrip(r)
}

// waitRow waits until GET /api/directory/{key} finds the row (present) or not.
func waitRow(t *testing.T, n *capdir.Node, key string, present bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := nodetest.Do(t, n, "GET", "/api/directory/"+key, "")
		if (code == http.StatusOK) == present {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("row %s present=%v never came: %d %s", key, present, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The upstream's tools are imported as rows of runner mcp when the node starts,
// and kept in step: a tool added upstream at run time reaches a connected
// capdir MCP client as list_changed and is callable; a tool removed upstream is
// refused as an unknown key.
func TestMCPUpstreamToolsKeptInStep(t *testing.T) {
	srv, hs := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"up": {Name: "up", URL: hs.URL}}
	})
	row := waitRow(t, n, "UP_ECHO", true)
	if !strings.Contains(row, `"runner":"mcp"`) || !strings.Contains(row, `"target":"up/echo"`) || !strings.Contains(row, `# SOURCE: mcp upstream=\"up\"`) {
		t.Fatalf("imported row: %s", row)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UP_ECHO","body":""}`); !strings.Contains(body, `"ok":true`) || !strings.Contains(body, `"result":"{}"`) {
		t.Fatalf("imported row called: %d %s", code, body)
	}

	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-mcp-sync-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	srv.AddTool(&sdk.Tool{Name: "added", Description: "Added at run time.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added answers"}}}, nil
		})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no list_changed reached capdir's MCP client after a tool was added upstream")
	}
	waitRow(t, n, "UP_ADDED", true)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "UP_ADDED", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "added answers") {
		t.Fatalf("the added tool through capdir's /mcp: %v %+v", err, res)
	}

	srv.RemoveTools("echo")
	waitRow(t, n, "UP_ECHO", false)
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UP_ECHO","body":""}`); !strings.Contains(body, "unknown_key") {
		t.Fatalf("a tool removed upstream: %d %s", code, body)
	}
}
