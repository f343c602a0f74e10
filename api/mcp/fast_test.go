package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/internal/nodetest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// contentTypes records the Content-Type of every answer to a POST whose body
// names method.
type contentTypes struct {
	withHeader
	method string

	mu  sync.Mutex
	got []string
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := c.withHeader.RoundTrip(r)
	if err == nil && bytes.Contains(body, []byte(`"method":"`+c.method+`"`)) {
		c.mu.Lock()
		c.got = append(c.got, resp.Header.Get("Content-Type"))
		c.mu.Unlock()
	}
	return resp, err
}

// toolsCall is a raw tools/call of name with arguments (JSON), under id; extra,
// when not empty, is one more top-level member ("x":0), which the fast path does
// not read: the SDK answers such a request, as it answered every one before.
func toolsCall(id, name, arguments, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + arguments + `}` + extra + `}`
}

// sseData is the data of the one event of an SDK stream answer.
func sseData(t *testing.T, body string) string {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d
		}
	}
	t.Fatalf("no event data in %q", body)
	return ""
}

// A tools/call of an open session is answered on its own POST as one
// application/json response, which the SDK's client reads as it reads a stream;
// initialize and tools/list are still the SDK's streams. The response is the
// one the SDK writes for the same call, byte for byte (compared on calls that
// leave no receipt, so that no invocation id differs): in tools mode and for
// search mode's three tools, under a number or a string id. An id the SDK would
// rewrite (a string with escapes, a fraction) is left to the SDK.
func TestToolsCallAnsweredOnItsOwnPOST(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	rec := &contentTypes{withHeader: owner(), method: "tools/call"}
	cs, err := sdkConnect(n, rec, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := call(t, cs, "GREET", map[string]any{"args": "Ada"}); got.IsError || text(got) != "Hello, Ada!" {
		t.Fatalf("GREET: isError=%v %q", got.IsError, text(got))
	}
	if len(rec.got) != 1 || rec.got[0] != "application/json" {
		t.Fatalf("tools/call answered as %q, want one application/json response", rec.got)
	}
	lists := &contentTypes{withHeader: owner(), method: "tools/list"}
	ls, err := sdkConnect(n, lists, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	listNames(t, ls)
	if len(lists.got) != 1 || lists.got[0] != "text/event-stream" {
		t.Errorf("tools/list answered as %q, want the SDK's stream", lists.got)
	}

	search := connect(t, n, owner(), "mode=search", nil)
	before := lastSeq(t, n.Log())
	for _, c := range []struct {
		session        *sdk.ClientSession
		id, name, args string
	}{
		{cs, "7", "GREET", `{"args":42}`},
		{cs, `"call-7"`, "GREET", `{"args":42}`},
		{cs, "-3", "GREET", `[]`},
		{search, "8", "describe", `{"key":"GREET"}`},
		{search, "9", "search", `{"query":"greet someone"}`},
		{search, "10", "call", `{"key":"GREET","args":7}`},
		{search, "11", "describe", `null`},
	} {
		headers := []string{"x-terminal-key", nodetest.Key, "Mcp-Session-Id", c.session.ID(), "Mcp-Protocol-Version", "2025-06-18"}
		code, h, fast := post(t, n, "", toolsCall(c.id, c.name, c.args, ""), headers...)
		if code != 200 || h.Get("Content-Type") != "application/json" || h.Get("Content-Length") == "" {
			t.Errorf("%s %s: %d %s %q, want a 200 application/json answer", c.name, c.args, code, h.Get("Content-Type"), fast)
			continue
		}
		code, h, slow := post(t, n, "", toolsCall(c.id, c.name, c.args, `"x":0`), headers...)
		if code != 200 || h.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s with a member the fast path does not read: %d %s %q, want the SDK's stream", c.name, code, h.Get("Content-Type"), slow)
		}
		if want := sseData(t, slow); fast != want {
			t.Errorf("%s %s:\n fast path %s\n SDK       %s", c.name, c.args, fast, want)
		}
	}
	for _, id := range []string{`"a\u0041"`, "7.0"} {
		code, h, body := post(t, n, "", toolsCall(id, "GREET", `{"args":42}`, ""), "x-terminal-key", nodetest.Key, "Mcp-Session-Id", cs.ID())
		if code != 200 || h.Get("Content-Type") != "text/event-stream" || !strings.Contains(body, "bad_arguments") {
			t.Errorf("id %s: %d %s %q, want the SDK's answer", id, code, h.Get("Content-Type"), body)
		}
	}
	if after := lastSeq(t, n.Log()); after != before {
		t.Errorf("calls refused before dispatch appended %d events", after-before)
	}
}

// barrier is an upstream that answers each request once want of them are in
// flight together (or "alone" after the test's bound).
type barrier struct {
	want    int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		w.Write([]byte("together"))
	case <-time.After(wait):
		w.Write([]byte("alone"))
	}
}

// The calls of one session are not serialised: two tools/calls of one session
// reach the upstream together, each answered on its own POST.
func TestToolsCallsOfOneSessionRunTogether(t *testing.T) {
	b := &barrier{want: 2, all: make(chan struct{})}
	up := httptest.NewServer(b)
	defer up.Close()
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "MEET", "type": "http", "target": "GET " + up.URL + "/meet", "content": "# WHAT: Meet."})
	cs := connect(t, n, owner(), "", nil)
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "MEET", Arguments: map[string]any{}})
			if err != nil {
				got[i] = err.Error()
				return
			}
			got[i] = text(res)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if !strings.Contains(g, "together") {
			t.Errorf("call %d: %q, want both calls in flight together", i, g)
		}
	}
}

// Whatever the fast path does not take is the SDK's, answered as before and
// dispatching nothing: malformed JSON-RPC, batches, bodies too deep or too large,
// empty bodies, a tools/call without an id (a notification) or params, another
// JSON-RPC version, an unknown session, a tools/call before initialize; a session's
// request without its credential, with a wrong one or with another one is refused
// before either path reads it.
func TestFastPathLeavesTheRestToTheSDK(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	cs := connect(t, n, owner(), "", nil)
	sid := cs.ID()
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	greet := toolsCall("7", "GREET", `{"args":"Ada"}`, "")
	owner := []string{"x-terminal-key", nodetest.Key, "Mcp-Session-Id", sid}
	v0618 := append(owner[:4:4], "Mcp-Protocol-Version", "2025-06-18")
	awaitSessions(t, n, 1, "after connecting")
	before := lastSeq(t, n.Log())
	for _, c := range []struct {
		name    string
		body    string
		headers []string
		status  int
		want    string
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`, owner, 400, "malformed payload"},
		{"a batch", "[" + greet + "]", v0618, 400, "JSON-RPC batching is not supported"},
		{"too deep", toolsCall("7", "GREET", `{"args":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`}`, ""), owner, 400, "maximum nesting depth"},
		{"too large", toolsCall("7", "GREET", `{"args":"`+strings.Repeat("a", mcp.DefaultMaxBody)+`"}`, ""), owner, 413, "request body exceeds 4194304 bytes"},
		{"empty", "", owner, 400, "POST requires a non-empty body"},
		{"a tools/call notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"GREET","arguments":{"args":"Ada"}}}`, owner, 400, `missing id for "tools/call"`},
		{"no params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, owner, 400, `missing required "params"`},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{"name":"GREET"}}`, owner, 400, "invalid message version tag"},
		{"an unknown session", greet, []string{"x-terminal-key", nodetest.Key, "Mcp-Session-Id", "no-such-session"}, 404, "session not found"},
		{"before initialize", greet, []string{"x-terminal-key", nodetest.Key}, 200, `method \"tools/call\" is invalid during session initialization`},
		{"no credential", greet, []string{"Mcp-Session-Id", sid}, 401, `"error":"unauthorized"`},
		{"a wrong owner key", greet, []string{"x-terminal-key", "not-the-owner-key-0000", "Mcp-Session-Id", sid}, 401, `"error":"unauthorized"`},
		{"a malformed token", greet, []string{"Authorization", "Bearer abc.def.ghi", "Mcp-Session-Id", sid}, 401, `"error":"token:malformed"`},
		{"another credential", greet, []string{"Authorization", "Bearer " + tok, "Mcp-Session-Id", sid}, 403, "session_credential_mismatch"},
	} {
		code, h, body := post(t, n, "", c.body, c.headers...)
		if code != c.status || !strings.Contains(body, c.want) || h.Get("Content-Type") == "application/json" && code == 200 {
			t.Errorf("%s: %d %s %.200q, want %d with %q", c.name, code, h.Get("Content-Type"), body, c.status, c.want)
		}
	}
	if code, _, body := post(t, n, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, owner...); code != 202 || body != "" {
		t.Errorf("a notification: %d %q, want the SDK's 202", code, body)
	}
	if after := lastSeq(t, n.Log()); after != before {
		t.Errorf("refused requests appended %d events", after-before)
	}
	if got := n.MCP().OpenSessions(); got != 1 {
		t.Errorf("%d sessions after the refusals, want the one opened", got)
	}
	if got := call(t, cs, "GREET", map[string]any{"args": "Ada"}); got.IsError || text(got) != "Hello, Ada!" {
		t.Errorf("the session after the refusals: isError=%v %q", got.IsError, text(got))
	}
}

// A session's idle wait holds while a call the fast path answers is in flight,
// however long it runs, and starts once it is answered: the session ends after
// Config.SessionIdle without a request.
func TestSessionIdleHoldsWhileACallRuns(t *testing.T) {
	url, arrived, free := slowUpstream(t)
	defer free() // before the node stops: a failed test does not hold the call
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "SLOW", "type": "http", "target": "GET " + url + "/slow", "content": "# WHAT: Answer slowly."})
	const idle = time.Second // longer than a loaded machine takes from connecting to calling
	h, err := mcp.New(mcp.Config{Projector: n.Projector(), Dispatcher: n.Dispatcher(), TerminalKey: nodetest.Key, SessionIdle: idle})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: srv.URL, HTTPClient: &http.Client{Transport: owner()}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	answered := callAsync(cs, "SLOW")
	select {
	case <-arrived:
	case res := <-answered: // the session ended before the call reached the upstream
		t.Fatalf("the call ended before it reached the upstream: %q", text(res))
	}
	time.Sleep(2 * idle) // the call outlasts the idle timeout: nothing to wait for but time
	if got := h.OpenSessions(); got != 1 {
		t.Fatalf("%d sessions while a call is in flight, want 1", got)
	}
	free()
	if res := <-answered; res.IsError || !strings.Contains(text(res), "slow") {
		t.Fatalf("the long call: isError=%v %q", res.IsError, text(res))
	}
	deadline := time.Now().Add(wait)
	for h.OpenSessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the session did not end after %v idle", idle)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
