package mcp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// headers sets a credential header and an Idempotency-Key on every request.
type headers struct {
	cred withHeader
	key  string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.key != "" {
		r.Header.Set("Idempotency-Key", h.key)
	}
	return h.cred.RoundTrip(r)
}

// A tools/call sent with an Idempotency-Key runs once: sent again (on the same
// session or another) it answers the first call's receipt and the upstream is not
// called again; the same key for another call is refused, nothing run; another
// caller's same key is its own call; a malformed key is refused before anything.
func TestToolsCallWithIdempotencyKeyRunsOnce(t *testing.T) {
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("charged " + r.URL.Query().Get("amount")))
	})
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "CHARGE", "type": "http", "target": "GET " + up.URL + "/charge?amount=$1",
		"content": "# WHAT: Charge an amount.\n# ARGS: $1=amount"})

	dialKey := func(cred withHeader, key string) func(args string) (string, string, bool) {
		cs, err := sdkConnect(n, headers{cred, key}, "mode=search")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return func(args string) (string, string, bool) {
			got := call(t, cs, "call", map[string]any{"key": "CHARGE", "args": args})
			if got.IsError {
				return "", text(got), true
			}
			return invocationID(t, got), text(got), false
		}
	}
	first := dialKey(owner(), "order-17")
	id1, out1, _ := first("5")
	id2, out2, _ := first("5")
	id3, _, _ := dialKey(owner(), "order-17")("5") // another session, the same caller
	if up.Hits() != 1 || id1 == "" || id1 != id2 || id1 != id3 || out1 != out2 || !strings.HasPrefix(out1, "HTTP 200:charged 5") {
		t.Fatalf("three copies: %d upstream calls; ids %s %s %s; %q %q", up.Hits(), id1, id2, id3, out1, out2)
	}
	if _, msg, isErr := first("6"); !isErr || !strings.Contains(msg, "Idempotency-Key") || up.Hits() != 1 {
		t.Fatalf("the key reused for another call: error=%v %q, %d upstream calls", isErr, msg, up.Hits())
	}
	tok, _ := mint(t, n, token.Scope{Keys: []string{"CHARGE"}}, time.Now(), time.Hour)
	if id, _, isErr := dialKey(bearer(tok), "order-17")("5"); isErr || id == id1 || up.Hits() != 2 {
		t.Fatalf("a token holder's order-17: %s (owner's %s), %d upstream calls", id, id1, up.Hits())
	}
	if _, msg, isErr := dialKey(owner(), "has space")("5"); !isErr || !strings.Contains(msg, "visible ASCII") || up.Hits() != 2 {
		t.Fatalf("a malformed key: error=%v %q", isErr, msg)
	}
}

// A tools/call sent again under its Idempotency-Key with another token of the
// same subject is answered with the first call's receipt only when that token
// could make the call: one whose scope does not hold the key gets scope:<KEY>, as
// a fresh call does, and nothing of the first call; a token of the same scope
// gets the first call, run once.
func TestToolsCallRepeatPassesTheGateForTheTokenPresentedNow(t *testing.T) {
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("secret for " + r.URL.Query().Get("q")))
	})
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "SECRETFN", "type": "http", "target": "GET " + up.URL + "/s?q=$1",
		"content": "# WHAT: Read a secret.\n# ARGS: $1=query"})
	postRow(t, n, greetRow("ECHO"))
	callAs := func(tok, tool string, args map[string]any) *sdk.CallToolResult {
		cs, err := sdkConnect(n, headers{bearer(tok), "k"}, "mode=search")
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		return call(t, cs, tool, args)
	}
	a, _ := mint(t, n, token.Scope{Keys: []string{"SECRETFN"}}, time.Now(), time.Hour)
	first := callAs(a, "call", map[string]any{"key": "SECRETFN", "args": "x"})
	if first.IsError || !strings.Contains(text(first), "secret for x") {
		t.Fatalf("first call: %q", text(first))
	}
	b, _ := mint(t, n, token.Scope{Keys: []string{"ECHO"}}, time.Now(), time.Hour)
	got := callAs(b, "call", map[string]any{"key": "SECRETFN", "args": "x"})
	if !got.IsError || text(got) != "scope:SECRETFN" || up.Hits() != 1 {
		t.Fatalf("the repeat with a token without SECRETFN in scope: error=%v %q, %d upstream calls; want scope:SECRETFN",
			got.IsError, text(got), up.Hits())
	}
	again, _ := mint(t, n, token.Scope{Keys: []string{"SECRETFN"}}, time.Now(), time.Hour)
	got = callAs(again, "call", map[string]any{"key": "SECRETFN", "args": "x"})
	if got.IsError || invocationID(t, got) != invocationID(t, first) || up.Hits() != 1 {
		t.Fatalf("the repeat with a token of the same scope: %q, %d upstream calls", text(got), up.Hits())
	}
}
