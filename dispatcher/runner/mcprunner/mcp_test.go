package mcprunner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
)

func newRunner(t *testing.T, ups Static, env map[string]string) *Runner {
	t.Helper()
	r, err := New(Config{Upstreams: ups, Env: runner.MapEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

func TestRunResults(t *testing.T) {
	_, hs := mcptest.Server(t)
	r := newRunner(t, Static{
		"up":   {Name: "up", URL: hs.URL},
		"gh":   {Name: "gh", URL: hs.URL, Auth: `headers:{"Authorization":"Bearer $GH_TOKEN"}`},
		"down": {Name: "down", URL: deadURL()},
	}, map[string]string{"GH_TOKEN": "tok-123"})
	for _, tc := range []struct {
		target, body, want string
		kind               error
	}{
		{"up/echo", `{"q":"x","n":2}`, `{"n":2,"q":"x"}`, nil},
		{"up/echo", "a b", `{"args":"a b"}`, nil},
		{"up/echo", "", `{}`, nil},
		{"up/structured", "", `{"n":1}`, nil},
		{"gh/headers", "", `auth=Bearer REDACTED args={}`, nil},
		{"up/fail", "", "ERR:mcp:up:tool_error:boom", ErrToolError},
		{"up/nope", "", "ERR:mcp:up:protocol:", ErrProtocol},
		{"up/echo", "{not json", "ERR:mcp:bad_arguments:not a JSON object", ErrBadArguments},
		{"nobody/echo", "", "ERR:mcp:unknown_upstream:nobody", ErrUnknownUpstream},
		{"echo", "", "ERR:mcp:bad_target:echo", ErrBadTarget},
		{"down/echo", "", "ERR:mcp:down:unreachable:", ErrUnreachable},
	} {
		o := r.Run(context.Background(), runner.Call{Row: mcpRow(tc.target, ""), Body: tc.body})
		if !strings.HasPrefix(o.Result, tc.want) || (tc.kind == nil) != (o.Err == nil) || (tc.kind != nil && !errors.Is(o.Err, tc.kind)) {
			t.Errorf("%s %q: got %q (%v), want %q (%v)", tc.target, tc.body, o.Result, o.Err, tc.want, tc.kind)
		}
	}
}

// TestUpstreamKilledMidCall: the upstream goes away while a call waits on it
// (every connection to it cut, new ones refused); the call fails with the
// unreachable literal, not a hang, and the next call, once it is back,
// reconnects.
func TestUpstreamKilledMidCall(t *testing.T) {
	srv, _ := mcptest.Server(t)
	entered, killed := make(chan struct{}), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(entered)
		select {
		case <-ctx.Done():
		case <-killed:
		}
		return nil, errors.New("gone")
	})
	var dead atomic.Bool
	h := mcptest.Handler(srv)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if dead.Load() {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close) // after the runner's Stop, which ends its sessions
	r := newRunner(t, Static{"up": {Name: "up", URL: hs.URL}}, nil)
	go func() {
		<-entered
		dead.Store(true)
		hs.CloseClientConnections()
		close(killed)
	}()
	o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/hang", "")})
	if !strings.HasPrefix(o.Result, "ERR:mcp:up:unreachable:") || !errors.Is(o.Err, ErrUnreachable) {
		t.Fatalf("killed mid-call: %q (%v)", o.Result, o.Err)
	}
	if o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", ""), Body: "x"}); !errors.Is(o.Err, ErrUnreachable) {
		t.Fatalf("while down: %q", o.Result)
	}
	dead.Store(false)
	if o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", ""), Body: "again"}); o.Result != `{"args":"again"}` {
		t.Fatalf("back up: %q", o.Result)
	}
}

// Hostile upstreams: one answering garbage, one that never answers, and a tool
// that never answers each fail with a literal within the runner's timeout.
func TestHostileUpstreams(t *testing.T) {
	_, good := mcptest.Server(t)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000)))
	}))
	t.Cleanup(garbage.Close)
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(release) })
	r, err := New(Config{
		Upstreams: Static{"up": {Name: "up", URL: good.URL}, "garbage": {Name: "garbage", URL: garbage.URL}, "silent": {Name: "silent", URL: silent.URL}},
		Env:       runner.MapEnv(nil), Limits: runner.Limits{Timeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	for _, tc := range []struct {
		target, want string
		kind         error
	}{
		{"garbage/echo", "ERR:mcp:garbage:unreachable:", ErrUnreachable},
		{"silent/echo", "ERR:mcp:silent:unreachable:", ErrUnreachable},
		{"up/block", "ERR:mcp:up:timeout:block", ErrTimeout},
	} {
		o := r.Run(context.Background(), runner.Call{Row: mcpRow(tc.target, "")})
		if !strings.HasPrefix(o.Result, tc.want) || !errors.Is(o.Err, tc.kind) {
			t.Errorf("%s: %q (%v), want %s", tc.target, o.Result, o.Err, tc.want)
		}
	}
}
