package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

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
		mcpRowJSON("UP_ECHO", "up/echo"), mcpRowJSON("UP_FAIL", "up/fail"), mcpRowJSON("UP_NOPE", "up/nope"),
		mcpRowJSON("ELSEWHERE", "nobody/echo"), mcpRowJSON("DOWN_ECHO", "down/echo"))
	for _, tc := range []struct{ key, body, want string }{
		{"UP_ECHO", "hello", `"result":"{\"args\":\"hello\"}"`},
		{"UP_FAIL", "", `"result":"ERR:mcp:up:tool_error:boom"`},
		{"UP_NOPE", "", `"result":"ERR:mcp:up:protocol:`},
		{"ELSEWHERE", "", `"result":"ERR:mcp:unknown_upstream:nobody"`},
		{"DOWN_ECHO", "", `"result":"ERR:mcp:down:unreachable:`},
	} {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"`+tc.key+`","body":"`+tc.body+`"}`)
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s; want %s", tc.key, code, body, tc.want)
		}
	}
}
