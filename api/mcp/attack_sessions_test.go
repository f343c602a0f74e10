package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/internal/nodetest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A token holder opening sessions without end holds no more than
// DefaultMaxSessions of them: each new one past the bound ends the token's own
// session idle longest (its next call is the SDK's 404 and runs nothing), never
// the owner's; the token's newest sessions and the owner's go on calling.
func TestSessionsOfOneCredentialAreBounded(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	own := connect(t, n, owner(), "", nil)
	open := func() string {
		t.Helper()
		code, h, body := post(t, n, "", initialize, "Authorization", "Bearer "+tok)
		if code != 200 || h.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		return h.Get("Mcp-Session-Id")
	}
	first := open()
	var last string
	for range 2 * mcp.DefaultMaxSessions {
		last = open()
	}
	deadline := time.Now().Add(wait)
	for n.MCP().OpenSessions() != mcp.DefaultMaxSessions+1 { // the token's, and the owner's
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open after %d opened by one token; want %d of the token's and the owner's",
				n.MCP().OpenSessions(), 2*mcp.DefaultMaxSessions+1, mcp.DefaultMaxSessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	before := lastSeq(t, n.Log())
	hdr := func(id string) []string {
		return []string{"Mcp-Session-Id", id, "Authorization", "Bearer " + tok, "Mcp-Protocol-Version", "2025-06-18"}
	}
	if code, _, body := post(t, n, "", toolsCall("1", "GREET", `{"args":"first"}`, ""), hdr(first)...); code != http.StatusNotFound || strings.Contains(body, "Hello") {
		t.Fatalf("a call of the token's idlest session, ended to make room: %d %s; want the SDK's 404", code, body)
	}
	deletedCallAppendedNothing(t, n, before)
	if code, _, body := post(t, n, "", toolsCall("2", "GREET", `{"args":"last"}`, ""), hdr(last)...); code != 200 || !strings.Contains(body, "Hello, last!") {
		t.Fatalf("a call of the token's newest session: %d %s", code, body)
	}
	if res := call(t, own, "GREET", map[string]any{"args": "owner"}); res.IsError || text(res) != "Hello, owner!" {
		t.Fatalf("the owner's session after a token's flood of sessions: %v %q", res.IsError, text(res))
	}
}

// When each of a credential's sessions is answering a request, a new one is
// refused with 429 too_many_sessions, saying what to do, and opens nothing;
// once a session is idle, a new one ends it and opens.
func TestSessionsAllBusyRefuseANewOne(t *testing.T) {
	url, arrived, free := slowUpstream(t)
	defer free() // before the node stops: a failed test does not hold the call
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "SLOW", "type": "http", "target": "GET " + url + "/slow", "content": "# WHAT: Answer slowly."})
	h, srv := serveHandler(t, n, mcp.Config{MaxSessions: 1})
	cs := dialOwner(t, srv.URL)
	answered := callAsync(cs, "SLOW")
	select {
	case <-arrived:
	case res := <-answered:
		t.Fatalf("the call ended before it reached the upstream: %q", text(res))
	}
	code, hd, body := postTo(t, srv.URL, initialize, "x-terminal-key", nodetest.Key)
	var a map[string]string
	if code != http.StatusTooManyRequests || json.Unmarshal([]byte(body), &a) != nil || a["error"] != "too_many_sessions" ||
		!strings.Contains(a["how_to_fix"], "DELETE /mcp") || hd.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a session past the bound, the other answering a call: %d %s (session %q); want 429 too_many_sessions", code, body, hd.Get("Mcp-Session-Id"))
	}
	// The refusal opened nothing: the handler comes to hold the first session
	// alone (its opening may be recorded after its client's call has begun, as
	// may the end of the SDK client's probe of a newer protocol).
	for deadline := time.Now().Add(wait); h.OpenSessions() != 1 || h.RegisteredSessions() != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions (%d recorded) after the refusal, want the first alone", h.RegisteredSessions(), h.OpenSessions())
		}
		time.Sleep(5 * time.Millisecond)
	}
	free()
	if res := <-answered; res.IsError || !strings.Contains(text(res), "slow") {
		t.Fatalf("the call in flight: isError=%v %q", res.IsError, text(res))
	}
	if code, hd, body := postTo(t, srv.URL, initialize, "x-terminal-key", nodetest.Key); code != 200 || hd.Get("Mcp-Session-Id") == "" {
		t.Fatalf("a session once the other is idle: %d %s", code, body)
	}
}

// serveHandler serves a handler of n's with cfg's choices over its own test
// server, stopped with the test.
func serveHandler(t *testing.T, n *capdir.Node, cfg mcp.Config) (*mcp.Handler, *httptest.Server) {
	t.Helper()
	cfg.Projector, cfg.Dispatcher, cfg.TerminalKey = n.Projector(), n.Dispatcher(), nodetest.Key
	h, err := mcp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close(); cancel(); <-ran }) // the sessions end first: their streams hold the server
	return h, srv
}

// dialOwner opens an owner's session at url with the SDK's client.
func dialOwner(t *testing.T, url string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: owner()}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// postTo posts body to url as post does to a node's /mcp.
func postTo(t *testing.T, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// slowUpstream is an upstream whose every request is announced on arrived and
// answered "slow" once free is called; a test defers free, so that a failure
// does not leave the node stopping behind a held call.
func slowUpstream(t *testing.T) (url string, arrived <-chan struct{}, free func()) {
	t.Helper()
	in, release := make(chan struct{}, 1), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in <- struct{}{}
		<-release
		w.Write([]byte("slow"))
	}))
	var once sync.Once
	free = func() { once.Do(func() { close(release) }) }
	t.Cleanup(up.Close)
	t.Cleanup(free) // before up.Close, which waits for the requests it holds
	return up.URL, in, free
}

// callAsync calls the tool name with no arguments on cs, and sends its result
// (a call that fails as an error result) on the channel it returns.
func callAsync(cs *sdk.ClientSession, name string) <-chan *sdk.CallToolResult {
	answered := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			res = &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}, IsError: true}
		}
		answered <- res
	}()
	return answered
}
