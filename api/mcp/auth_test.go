package mcp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// initialize is an MCP initialize request as a client's first POST.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one JSON-RPC message to /mcp with the given headers.
func post(t *testing.T, n *capdir.Node, query, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	return postTo(t, endpoint(n, query), body, headers...)
}

// Without a credential that holds, /mcp answers 401 with the literal reason and
// reads nothing, appends nothing, opens no session; the SDK's client cannot connect.
func TestUnauthorized(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	expired, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now().Add(-2*time.Hour), time.Hour)
	revoked, claims := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+claims.ID, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	foreign := strings.Replace(revoked, ".", ".x", 1) // its payload no longer matches its signature
	before := lastSeq(t, n.Log())
	ctlBefore, _ := n.Log().LastSeq(t.Context(), wire.ControlStream)
	for _, c := range []struct {
		name    string
		headers []string
		status  int
		error   string
	}{
		{"no credential", nil, 401, "unauthorized"},
		{"a wrong owner key", []string{"x-terminal-key", "not-the-owner-key-0000"}, 401, "unauthorized"},
		{"not a bearer token", []string{"Authorization", "Basic abc"}, 401, "token:malformed"},
		{"a garbled token", []string{"Authorization", "Bearer abc.def.ghi"}, 401, "token:malformed"},
		{"a tampered token", []string{"Authorization", "Bearer " + foreign}, 401, "token:bad_signature"},
		{"an expired token", []string{"Authorization", "Bearer " + expired}, 401, "token:expired"},
		{"a revoked token", []string{"Authorization", "Bearer " + revoked}, 401, "token:revoked"},
		{"both credentials", []string{"x-terminal-key", nodetest.Key, "Authorization", "Bearer " + expired}, 400, ""},
	} {
		code, h, body := post(t, n, "", initialize, c.headers...)
		var a map[string]string
		if code != c.status || json.Unmarshal([]byte(body), &a) != nil || c.error != "" && a["error"] != c.error || a["how_to_fix"] == "" && c.status == 401 {
			t.Errorf("%s: %d %s, want %d with error %q", c.name, code, body, c.status, c.error)
		}
		if h.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: a session was opened", c.name)
		}
		if c.status == 401 && h.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.name)
		}
	}
	if _, err := dial(n, withHeader{}, "", nil); err == nil {
		t.Error("the SDK client connected without a credential")
	}
	if _, err := dial(n, bearer("abc.def.ghi"), "", nil); err == nil {
		t.Error("the SDK client connected with a wrong token")
	}
	ctlAfter, _ := n.Log().LastSeq(t.Context(), wire.ControlStream)
	if after := lastSeq(t, n.Log()); after != before || ctlAfter != ctlBefore {
		t.Errorf("refused requests appended events: data %d→%d, control %d→%d", before, after, ctlBefore, ctlAfter)
	}
}

// A session keeps the credential that opened it: a request of the session under
// another credential is 403 and the session is unchanged.
func TestSessionCredentialFixed(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	cs := connect(t, n, owner(), "", nil)
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	code, _, body := post(t, n, "", list, "Mcp-Session-Id", cs.ID(), "Authorization", "Bearer "+tok, "Mcp-Protocol-Version", "2025-06-18")
	if code != 403 || !strings.Contains(body, `"error":"session_credential_mismatch"`) {
		t.Errorf("the owner's session with a token: %d %s", code, body)
	}
	code, _, body = post(t, n, "", list, "Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", "2025-06-18")
	if code != 401 {
		t.Errorf("the owner's session without a credential: %d %s", code, body)
	}
	if names := listNames(t, cs); len(names) != 1 {
		t.Errorf("the session's tools = %v", names)
	}
}

// An unknown mode is 400 and opens nothing.
func TestBadMode(t *testing.T) {
	n := nodetest.Start(t, nil)
	code, h, body := post(t, n, "mode=everything", initialize, "x-terminal-key", nodetest.Key)
	if code != 400 || !strings.Contains(body, `unknown MCP mode \"everything\"`) || h.Get("Mcp-Session-Id") != "" {
		t.Errorf("mode=everything: %d %s", code, body)
	}
}
