package e2e_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// An upstream the owner registers through PUT /api/upstreams/{name} is synced
// as one given by flags: its tools become rows, called with its credential
// (named by variable, its value never in the answer). GET lists it beside the
// operator's. Removing it leaves its rows, whose calls then fail with
// ERR:mcp:unknown_upstream:<name>; registering it again makes them callable.
// The registrations are in the log: the replay check at cleanup covers them.
func TestRegisteredUpstreamSyncedAndRemoved(t *testing.T) {
	_, hs := mcptest.Server(t)
	_, fixed := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"ops": {Name: "ops", URL: fixed.URL}}
		c.SecretEnv = []string{"UP_*"}
	}, capdir.WithEnv(runner.MapEnv(map[string]string{"UP_KEY": "up-secret-value"})))
	reg := `{"url":"` + hs.URL + `","auth":"headers:{\"Authorization\":\"Bearer $UP_KEY\"}"}`
	code, body := nodetest.Do(t, n, "PUT", "/api/upstreams/up", reg)
	if code != 200 || !strings.Contains(body, `"changed":true`) || !strings.Contains(body, `"from":"registered"`) {
		t.Fatalf("PUT /api/upstreams/up: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "PUT", "/api/upstreams/up", reg); code != 200 || !strings.Contains(body, `"changed":false`) {
		t.Fatalf("the same registration again: %d %s", code, body)
	}
	waitRow(t, n, "UP_STRUCTURED", true) // the last of its tools: the sync is done
	waitRow(t, n, "UP_HEADERS", true)
	_, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UP_HEADERS","body":""}`)
	if !strings.Contains(body, `auth=Bearer REDACTED`) || strings.Contains(body, "up-secret-value") {
		t.Fatalf("a registered upstream's tool: %s", body)
	}
	_, body = nodetest.Do(t, n, "GET", "/api/upstreams", "")
	var list struct {
		Upstreams []struct{ Name, From, URL string }
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Upstreams) != 2 ||
		list.Upstreams[0].Name != "ops" || list.Upstreams[0].From != "flags" || list.Upstreams[1].Name != "up" || list.Upstreams[1].URL != hs.URL {
		t.Fatalf("GET /api/upstreams: %s", body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/upstreams/up", ""); code != 200 || !strings.Contains(body, `"transport":"http"`) {
		t.Fatalf("GET /api/upstreams/up: %d %s", code, body)
	}

	if code, body := nodetest.Do(t, n, "DELETE", "/api/upstreams/up", ""); code != 200 || !strings.Contains(body, `"removed":true`) {
		t.Fatalf("DELETE /api/upstreams/up: %d %s", code, body)
	}
	_, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UP_ECHO","body":""}`)
	if !strings.Contains(body, `"result":"ERR:mcp:unknown_upstream:up"`) {
		t.Fatalf("a removed upstream's row: %s", body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/upstreams/up", ""); code != 404 {
		t.Fatalf("GET a removed upstream: %d %s", code, body)
	}
	nodetest.Do(t, n, "PUT", "/api/upstreams/up", reg)
	_, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UP_ECHO","body":""}`)
	if !strings.Contains(body, `"ok":true`) || !strings.Contains(body, `"result":"{}"`) {
		t.Fatalf("registered again: %s", body)
	}
}

// The upstream routes are the owner's: no key, a wrong key and a capability
// token are refused. Hostile registrations are refused with what to fix and
// append nothing: bad names, user info or a query in the URL, a scheme that is
// not HTTP, an oversized or malformed body, an unknown field, a command (the API
// can never make the node run one), a variable off the allow-list, and a name
// the operator's flags own.
func TestUpstreamRoutesRefuse(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"ops": {Name: "ops", Command: []string{"true"}}}
		c.SecretEnv = []string{"UP_*"}
	})
	putRows(t, n, `{"key":"GREET","type":"fn","target":"ECHO","content":"# WHAT: Greets."}`)
	tok := mint(t, n, `{"sub":"agent","scope":{"keys":["GREET"]},"risk":"low"}`)
	before := nodetest.ControlSeq(t, n)
	good := `{"url":"http://127.0.0.1:1/mcp"}`
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/api/upstreams", 401}, {"GET", "/api/upstreams/up", 401}, {"PUT", "/api/upstreams/up", 401}, {"DELETE", "/api/upstreams/up", 401}} {
		if code, body := nodetest.DoKey(t, n, tc.method, tc.path, good, ""); code != tc.status {
			t.Errorf("%s %s without a key: %d %s", tc.method, tc.path, code, body)
		}
		if code, body := nodetest.DoKey(t, n, tc.method, tc.path, good, "wrong-key-wrong-key-wrong"); code != tc.status {
			t.Errorf("%s %s with a wrong key: %d %s", tc.method, tc.path, code, body)
		}
		if code, body := nodetest.DoToken(t, n, tc.method, tc.path, good, tok.Token); code != tc.status || !strings.Contains(body, "owner key") {
			t.Errorf("%s %s with a token: %d %s", tc.method, tc.path, code, body)
		}
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/upstreams/a.b", good, 400, "not an upstream name"},
		{"/api/upstreams/" + strings.Repeat("a", 65), good, 400, "not an upstream name"},
		{"/api/upstreams/up", `{"url":"http://user:pw@127.0.0.1:1/mcp"}`, 400, "user info"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp?token=x"}`, 400, "query"},
		{"/api/upstreams/up", `{"url":"file:///etc/passwd"}`, 400, "http:// or https://"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","command":["sh","-c","id"]}`, 400, "command"},
		{"/api/upstreams/up", `{"command":"sh -c id"}`, 400, "--mcp-stdio"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","extra":1}`, 400, "unknown field extra"},
		{"/api/upstreams/up", `{"url":7}`, 400, `must be a string`},
		{"/api/upstreams/up", `[1]`, 400, "one JSON object"},
		{"/api/upstreams/up", ``, 400, "empty body"},
		{"/api/upstreams/up", `{"url":"` + strings.Repeat("a", 17<<10) + `"}`, 413, "limit"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","auth":"bearer:OTHER_TOKEN"}`, 400, "allow-list"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","auth":"bearer:CAPDIR_TERMINAL_KEY"}`, 400, "capdir's own"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","auth":"nope:X"}`, 400, "auth"},
		{"/api/upstreams/ops", good, 409, "--mcp-http/--mcp-stdio"},
	} {
		code, body := nodetest.Do(t, n, "PUT", tc.path, tc.body)
		if code != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("PUT %s %.80s: %d %s; want %d naming %q", clipPath(tc.path), tc.body, code, body, tc.status, tc.want)
		}
	}
	if code, body := nodetest.Do(t, n, "DELETE", "/api/upstreams/nobody", ""); code != 404 {
		t.Errorf("DELETE an upstream not registered: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "DELETE", "/api/upstreams/ops", ""); code != 409 {
		t.Errorf("DELETE a flag's upstream: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/upstreams/ops", ""); code != 200 || strings.Contains(body, "true") || !strings.Contains(body, `"transport":"stdio"`) {
		t.Errorf("GET a stdio upstream shows no command: %d %s", code, body)
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("refused registrations appended %d events", after-before)
	}
}

// Without list_changed (an upstream that does not send it), the periodic relist
// brings a tool added upstream in as a row.
func TestMCPRelistWithoutListChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "quiet", Version: "1"},
		&sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}})
	answer := func(s string) sdk.ToolHandler {
		return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}, nil
		}
	}
	srv.AddTool(&sdk.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, answer("first"))
	hs := httptest.NewServer(mcptest.Handler(srv))
	t.Cleanup(hs.Close)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"quiet": {Name: "quiet", URL: hs.URL}}
		c.MCPRelist = 50 * time.Millisecond
	})
	waitRow(t, n, "QUIET_FIRST", true)
	srv.AddTool(&sdk.Tool{Name: "later", InputSchema: map[string]any{"type": "object"}}, answer("later answers"))
	waitRow(t, n, "QUIET_LATER", true)
	if _, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"QUIET_LATER","body":""}`); !strings.Contains(body, "later answers") {
		t.Fatalf("the relisted tool: %s", body)
	}
}

func clipPath(p string) string {
	if len(p) > 40 {
		return p[:40] + "…"
	}
	return p
}
