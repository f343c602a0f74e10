package mcprunner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
)

// countToolCalls serves next and counts the tools/call requests that reach it.
func countToolCalls(next http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			n.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

func echoParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": 1}}
}

// A call holds its session from the pool until it ends: another call dropping
// that session meanwhile (its connection failed) does not close it under the
// holder, whose call goes through; the next call gets a fresh session, and the
// dropped one is closed when its holder releases it.
func TestADroppedSessionServesTheCallHoldingIt(t *testing.T) {
	_, hs := mcptest.Server(t)
	r := newRunner(t, Static{"up": {Name: "up", URL: hs.URL}}, nil)
	u, _ := r.cfg.Upstreams.Upstream("up")
	ctx := context.Background()
	held, err := r.pool.get(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	r.pool.drop("up", held.l)
	if _, err := held.cs.CallTool(ctx, echoParams()); err != nil {
		t.Fatalf("a call holding a session another call dropped: %v", err)
	}
	next, err := r.pool.get(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if next.cs == held.cs {
		t.Fatal("the next call got the dropped session")
	}
	next.release()
	held.release()
	if _, err := held.cs.CallTool(ctx, echoParams()); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("the dropped session after its last call ended: %v, want it closed", err)
	}
}

// A call whose caller gave up (its context cancelled) says nothing about the
// connection: the session stays, and the next call uses it without connecting
// again.
func TestACancelledCallKeepsTheSession(t *testing.T) {
	srv, hs := mcptest.Server(t)
	entered := make(chan struct{}, 1)
	srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	var connects atomic.Int64
	r, err := New(Config{Upstreams: Static{"up": {Name: "up", URL: hs.URL}}, Env: runner.MapEnv(nil),
		Connected: func(string) { connects.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	if o := r.Run(ctx, runner.Call{Row: mcpRow("up/hold", "")}); !errors.Is(o.Err, runner.ErrCanceled) {
		t.Fatalf("a cancelled call: %q", o.Result)
	}
	if o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", "")}); !o.OK() {
		t.Fatal(o.Result)
	}
	if n := connects.Load(); n != 1 {
		t.Fatalf("%d sessions made, want 1: the cancelled call dropped the session", n)
	}
}

// A call whose caller's deadline ends before the upstream answers drops the
// session, as the runner's own timeout does: the upstream may be wedged, and
// a step of a flow whose budget ends first on every call would otherwise send
// each later call to the same wedged session.
func TestACallersDeadlineOnAWedgedUpstreamDropsTheSession(t *testing.T) {
	srv, hs := mcptest.Server(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.AddTool(&mcp.Tool{Name: "wedge", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("released")
	})
	var connects atomic.Int64
	r, err := New(Config{Upstreams: Static{"up": {Name: "up", URL: hs.URL}}, Env: runner.MapEnv(nil),
		Connected: func(string) { connects.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // connecting fits in it
		o := r.Run(ctx, runner.Call{Row: mcpRow("up/wedge", "")})
		cancel()
		if o.OK() {
			t.Fatalf("a call to a wedged tool answered: %q", o.Result)
		}
	}
	if n := connects.Load(); n != 2 {
		t.Fatalf("%d sessions made for two calls past their deadline, want 2: the wedged session was kept", n)
	}
}

// A call that meets a session the SDK has closed (its connection failed
// before the call; the SDK refuses a call on a closing connection without
// sending it) is made once more on a fresh session, and the upstream sees it
// once.
func TestACallMeetingAClosedSessionIsMadeOnceOnAFreshOne(t *testing.T) {
	srv, _ := mcptest.Server(t)
	var calls atomic.Int64
	hs := httptest.NewServer(countToolCalls(mcptest.Handler(srv), &calls))
	t.Cleanup(hs.Close)
	r := newRunner(t, Static{"up": {Name: "up", URL: hs.URL}}, nil)
	if o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", "")}); !o.OK() {
		t.Fatal(o.Result)
	}
	r.pool.sessions["up"].cur.cs.Close() // as the SDK closes it when its connection fails
	o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", `{"n":"$1"}`), Body: "2"})
	if !o.OK() || o.Result != `{"n":"2"}` {
		t.Fatalf("a call meeting a closed session: %q", o.Result)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the upstream saw %d tools/call, want 2 (one per Run)", n)
	}
}

// An upstream that answers a call with the SDK's "client is closing" code,
// after the tool ran, is not called again: the request left, so the tool may
// have run, and the call fails as unreachable.
func TestAnAnswerClaimingClosingIsNotCalledAgain(t *testing.T) {
	srv, _ := mcptest.Server(t)
	var ran atomic.Int64
	srv.AddTool(&mcp.Tool{Name: "pay", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran.Add(1)
		return nil, &jsonrpc.Error{Code: -32003, Message: "client is closing"}
	})
	hs := httptest.NewServer(mcptest.Handler(srv))
	t.Cleanup(hs.Close)
	r := newRunner(t, Static{"up": {Name: "up", URL: hs.URL}}, nil)
	o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/pay", "")})
	if o.OK() || !strings.HasPrefix(o.Result, "ERR:mcp:up:") {
		t.Fatalf("an answer claiming closing: %q", o.Result)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}
