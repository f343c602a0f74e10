package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// wait bounds every wait of these tests for a condition.
const wait = 10 * time.Second

// withHeader sets one credential header on every request a client sends.
type withHeader struct {
	name, value string
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.value != "" {
		r.Header.Set(h.name, h.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// owner and bearer are the credential headers of the owner and a token holder.
func owner() withHeader            { return withHeader{"x-terminal-key", nodetest.Key} }
func bearer(tok string) withHeader { return withHeader{"Authorization", "Bearer " + tok} }
func endpoint(n *capdir.Node, query string) string {
	if query != "" {
		query = "?" + query
	}
	return n.URL() + "/mcp" + query
}

// connect opens an MCP session with the SDK's own client over streamable HTTP.
// changed, when not nil, receives a value for every notifications/tools/list_changed.
func connect(t *testing.T, n *capdir.Node, cred withHeader, query string, changed chan<- struct{}) *sdk.ClientSession {
	t.Helper()
	cs, err := dial(n, cred, query, changed)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func dial(n *capdir.Node, cred withHeader, query string, changed chan<- struct{}) (*sdk.ClientSession, error) {
	return dialWith(n, cred, query, changed)
}

// sdkConnect connects through rt, which sets the credential.
func sdkConnect(n *capdir.Node, rt http.RoundTripper, query string) (*sdk.ClientSession, error) {
	return dialWith(n, rt, query, nil)
}

func dialWith(n *capdir.Node, rt http.RoundTripper, query string, changed chan<- struct{}) (*sdk.ClientSession, error) {
	opts := &sdk.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: endpoint(n, query), HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1,
	}, nil)
}

// postRow writes a row through the owner's POST /api/directory.
func postRow(t *testing.T, n *capdir.Node, row map[string]any) {
	t.Helper()
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST %v: %d %s", row["key"], code, body)
	}
}

// greetRow is an fn row that echoes "Hello, <name>!".
func greetRow(key string) map[string]any {
	return map[string]any{
		"key": key, "type": "fn", "target": "echo", "category": "demo",
		"content": "# WHAT: Greet someone by name.\n# WHEN_TO_USE: a capability needs a greeting.\n# ARGS: $1=name\n[\"Hello, $1!\"]",
	}
}

// listNames lists the session's tools, by name, in the order served.
func listNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// text is the text of a result's first content.
func text(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

// invocationID is the receipt's invocation id a result carries in _meta, checked
// against its text and structuredContent.
func invocationID(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	id, _ := res.Meta["capdir/invocation_id"].(string)
	if !strings.HasPrefix(id, "inv_") {
		t.Fatalf("no invocation id in _meta: %+v", res.Meta)
	}
	if len(res.Content) < 2 || !strings.Contains(res.Content[1].(*sdk.TextContent).Text, id) {
		t.Errorf("the text content does not name %s: %+v", id, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"invocation_id":"`+id+`"`) {
		t.Errorf("structuredContent does not carry %s: %s", id, b)
	}
	return id
}

// receipt reads an invocation's receipt through the owner's GET /api/receipts/{id}.
func receipt(t *testing.T, n *capdir.Node, id string) wire.Receipt {
	t.Helper()
	code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+id, "")
	if code != 200 {
		t.Fatalf("GET /api/receipts/%s: %d %s", id, code, body)
	}
	var rc wire.Receipt
	if err := json.Unmarshal([]byte(body), &rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

// awaitChange waits for a list_changed notification.
func awaitChange(t *testing.T, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(wait):
		t.Fatalf("no notifications/tools/list_changed after %s", what)
	}
}

// awaitListed waits for a list_changed notification, then reads tools/list
// until ok holds of its tools' names and descriptions. A notification may be
// one announcing an earlier change (the SDK announces the tools a session
// loads as it opens a moment later), so the list is read until it shows the
// change, within the test's wait.
func awaitListed(t *testing.T, cs *sdk.ClientSession, changed <-chan struct{}, what string, ok func(tools []*sdk.Tool) bool) {
	t.Helper()
	awaitChange(t, changed, what)
	for deadline := time.Now().Add(wait); ; time.Sleep(5 * time.Millisecond) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("tools/list after %s: %v", what, err)
		}
		if ok(res.Tools) {
			return
		}
		if time.Now().After(deadline) {
			var got []string
			for _, tl := range res.Tools {
				got = append(got, tl.Name+": "+tl.Description)
			}
			t.Fatalf("tools/list after %s = %q", what, got)
		}
	}
}

// toolNames are the names of tools.
func toolNames(tools []*sdk.Tool) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

// mint mints a capability token of the node's deployment, issued at now: with
// the node's signing key and audience, as the node's own minter would.
func mint(t *testing.T, n *capdir.Node, scope token.Scope, now time.Time, ttl time.Duration) (string, token.Claims) {
	t.Helper()
	cfg := n.Config()
	k, err := token.LoadOrCreateKey(cfg.TokenKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	m, err := token.NewMinter(token.MinterConfig{Key: k, Audience: cfg.TokenAudience})
	if err != nil {
		t.Fatal(err)
	}
	raw, c, err := m.Mint(token.MintRequest{Subject: "mcp-agent", Scope: scope, TTL: ttl}, now)
	if err != nil {
		t.Fatal(err)
	}
	return raw, c
}
