package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// The trace context a caller sends beside its traceparent: its sampled flag
// and its tracestate.

const callerState = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"

// A caller's unsampled traceparent (flags 00) is propagated, not recorded: no
// span is exported for it, the receipt names the caller's trace, and the
// upstream is sent that trace, still unsampled, with the caller's tracestate.
func TestTraceUnsampledCallerIsPropagatedNotRecorded(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	n, exp := startTracedNode(t, nil)
	row, _ := json.Marshal(map[string]any{"key": "PING", "type": "http", "target": "GET " + up.URL + "/ping", "content": "# WHAT: ping"})
	putRows(t, n, string(row))
	unsampled := "00-" + callerTrace + "-" + callerSpan + "-00"
	code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"PING","body":""}`,
		map[string]string{"x-terminal-key": nodetest.Key, "traceparent": unsampled, "tracestate": callerState})
	if code != http.StatusOK {
		t.Fatalf("dispatch: %d %s", code, body)
	}
	if rc := receiptOf(t, n, invocationOf(t, body)); rc.TraceID != callerTrace {
		t.Errorf("receipt trace_id = %q, want the caller's %s", rc.TraceID, callerTrace)
	}
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream hits = %d, want 1", len(reqs))
	}
	tp := reqs[0].Header.Get("traceparent")
	if !strings.HasPrefix(tp, "00-"+callerTrace+"-") || !strings.HasSuffix(tp, "-00") {
		t.Errorf("upstream traceparent %q; want the caller's trace, unsampled", tp)
	}
	if ts := reqs[0].Header.Get("tracestate"); ts != callerState {
		t.Errorf("upstream tracestate %q, want the caller's %q", ts, callerState)
	}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == callerTrace {
			t.Errorf("span %s recorded in an unsampled trace", s.Name)
		}
	}
}

// A caller's tracestate reaches an http row's upstream and an MCP upstream
// (its header and its _meta) with the trace; one over 512 bytes, of more than
// 32 members or malformed is dropped and the call runs in the caller's trace.
func TestTraceTracestateReachesTheUpstreams(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	srv, _ := mcptest.Server(t)
	mcpUp := upstreamtest.Start(t, mcptest.Handler(srv).ServeHTTP)
	n, _ := startTracedNode(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"up": {Name: "up", URL: mcpUp.URL}}
	})
	row, _ := json.Marshal(map[string]any{"key": "PING", "type": "http", "target": "GET " + up.URL + "/ping", "content": "# WHAT: ping"})
	putRows(t, n, string(row), mcpRowJSON("HAND_ECHO", "up/echo"))
	var members []string
	for i := range 33 {
		members = append(members, fmt.Sprintf("k%d=v", i))
	}
	many := strings.Join(members, ",")
	for _, tc := range []struct{ ts, want string }{
		{callerState, callerState},
		{"a=" + strings.Repeat("b", 600), ""},
		{many, ""},
		{"Not A Key=1", ""},
	} {
		code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"PING","body":""}`,
			map[string]string{"x-terminal-key": nodetest.Key, "traceparent": callerTP, "tracestate": tc.ts})
		if code != http.StatusOK {
			t.Fatalf("tracestate %.40q: %d %s", tc.ts, code, body)
		}
		reqs := up.Requests()
		last := reqs[len(reqs)-1].Header
		if !strings.HasPrefix(last.Get("traceparent"), "00-"+callerTrace+"-") || last.Get("tracestate") != tc.want {
			t.Errorf("tracestate %.40q: upstream got traceparent %q tracestate %.40q; want the caller's trace and %.40q",
				tc.ts, last.Get("traceparent"), last.Get("tracestate"), tc.want)
		}
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-trace-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, viaMeta := range []bool{false, true} {
		tt := stateTransport{tp: callerTP, ts: callerState}
		var meta sdk.Meta
		if viaMeta {
			tt = stateTransport{}
			meta = sdk.Meta{"traceparent": callerTP, "tracestate": callerState}
		}
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: tt}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := len(mcpUp.Requests())
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "HAND_ECHO", Arguments: map[string]any{"args": "hi"}, Meta: meta})
		cs.Close()
		if err != nil || res.IsError {
			t.Fatalf("tools/call (via _meta %v): %v %+v", viaMeta, err, res)
		}
		sent := false
		for _, r := range mcpUp.Requests()[before:] {
			if strings.Contains(r.Body, `"tools/call"`) {
				sent = strings.HasPrefix(r.Header.Get("traceparent"), "00-"+callerTrace+"-") &&
					r.Header.Get("tracestate") == callerState && strings.Contains(r.Body, `"tracestate":"`+callerState+`"`)
			}
		}
		if !sent {
			t.Errorf("via _meta %v: the upstream's tools/call did not carry the caller's tracestate (header and _meta)", viaMeta)
		}
	}
}

// stateTransport sends the owner key, a traceparent and a tracestate with
// every request.
type stateTransport struct{ tp, ts string }

func (st stateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-terminal-key", nodetest.Key)
	if st.tp != "" {
		r.Header.Set("traceparent", st.tp)
		r.Header.Set("tracestate", st.ts)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A bus request that carried its trace in its NATS headers alone (no
// traceparent field), held for the owner's approval, keeps its trace: the run
// after the approval continues it, the upstream is sent it with its
// tracestate, and the receipt names it.
func TestTraceApprovedBusCallContinuesItsTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, `{"paid":true}`))
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", "client")
	}, capdir.WithTracerProvider(tp))
	tokRow(t, g.n, map[string]any{"key": "PAY", "type": "http", "target": "POST " + up.URL + "/pay", "sensitive": 1,
		"input_schema": `{"type":"string"}`, "content": "# WHAT: Pay an amount.\n# ARGS: $1=amount\n{\"amount\":\"$1\"}"})
	tok := mint(t, g.n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	c1 := g.connect(t, "c1")
	js, err := jetstream.New(c1.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const headerTrace = "0af7651916cd43dd8448eb211c80319c"
	req := wire.InvocationRequest{Key: "PAY", Body: "10", Token: tok, Credential: wire.ClientActor("c1")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := wire.Encode(&ev)
	m := &nats.Msg{Subject: wire.BusRequestSubject("c1", "PAY"), Data: data, Header: nats.Header{
		"traceparent": []string{"00-" + headerTrace + "-b7ad6b7169203331-01"}, "tracestate": []string{callerState}}}
	if _, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(ev.ID)); err != nil {
		t.Fatalf("publish: %v", err)
	}
	for {
		code, body := nodetest.Do(t, g.n, "GET", "/api/approvals", "")
		if code == http.StatusOK && strings.Contains(body, req.InvocationID) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the bus call was never held: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, out := nodetest.Do(t, g.n, "POST", "/api/approvals/"+req.InvocationID, `{"decision":"approve"}`); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, out)
	}
	if rc := receiptOf(t, g.n, req.InvocationID); rc.TraceID != headerTrace || rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("the approved bus call's receipt: %s trace id %q, want %s in the header's trace %s", rc.Status, rc.TraceID, wire.StatusProvenMaterialResult, headerTrace)
	}
	waitSpans(t, exp, headerTrace, tracing.SpanWorker, tracing.SpanUpstream)
	reqs := up.Requests()
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0].Header.Get("traceparent"), "00-"+headerTrace+"-") || reqs[0].Header.Get("tracestate") != callerState {
		t.Fatalf("the upstream got %d requests (first traceparent %q tracestate %q); want one in the header's trace %s with its tracestate",
			len(reqs), first(reqs, "traceparent"), first(reqs, "tracestate"), headerTrace)
	}
}

// first is header name of the first of reqs, "" when there is none.
func first(reqs []upstreamtest.Request, name string) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].Header.Get(name)
}
