package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// One W3C trace follows a call from its entry point through the log, the
// worker, the gate, the runner, the steps and the upstream, with the SDK's
// in-memory exporter standing in for a collector.

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
	callerTP    = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// startTracedNode starts a node that traces into an in-memory exporter.
func startTracedNode(t *testing.T, mutate func(*capdir.Config)) (*capdir.Node, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return nodetest.Start(t, func(c *capdir.Config) {
		c.Fn.Registry = (&composeFns{}).registry()
		if mutate != nil {
			mutate(c)
		}
	}, capdir.WithTracerProvider(tp)), exp
}

// waitSpans waits until the exporter holds an ended span of each name in trace
// id, and returns the trace's spans.
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, id string, names ...string) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var spans tracetest.SpanStubs
		have := map[string]bool{}
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == id {
				spans = append(spans, s)
				have[s.Name] = true
			}
		}
		missing := ""
		for _, n := range names {
			if !have[n] {
				missing = n
			}
		}
		if missing == "" {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s has no %s span; it has %v", id, missing, spanNames(spans))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// ofName are the spans named name.
func ofName(spans tracetest.SpanStubs, name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// receiptOf is the owner's view of invocation inv's receipt.
func receiptOf(t *testing.T, n *capdir.Node, inv string) wire.Receipt {
	t.Helper()
	code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/receipts/%s: %d %s", inv, code, body)
	}
	var rc wire.Receipt
	if err := json.Unmarshal([]byte(body), &rc); err != nil {
		t.Fatalf("receipt %s: %v", body, err)
	}
	return rc
}

// invocationOf reads the invocation id of a dispatch answer.
func invocationOf(t *testing.T, body string) string {
	t.Helper()
	var a struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Proof.InvocationID == "" {
		t.Fatalf("no invocation id in %s (%v)", body, err)
	}
	return a.Proof.InvocationID
}

// checkNoBodies fails t for a span attribute that holds one of secrets.
func checkNoBodies(t *testing.T, spans tracetest.SpanStubs, secrets ...string) {
	t.Helper()
	for _, s := range spans {
		for _, a := range s.Attributes {
			for _, sec := range secrets {
				if strings.Contains(a.Value.Emit(), sec) {
					t.Errorf("span %s attribute %s = %q holds %q", s.Name, a.Key, a.Value.Emit(), sec)
				}
			}
		}
		if strings.Contains(s.Status.Description, secrets[0]) {
			t.Errorf("span %s status holds the body", s.Name)
		}
	}
}

// An HTTP call of a flow of two steps, one an http row: one trace, the
// caller's, from the facade down to the upstream, which is sent its
// traceparent; the receipts of the flow and its steps carry its id, the public
// receipt does not.
func TestTraceFollowsAFlowFromHTTPToTheUpstream(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "sent"))
	n, exp := startTracedNode(t, nil)
	send, _ := json.Marshal(map[string]any{"key": "SEND", "type": "http", "target": "POST " + up.URL + "/send",
		"content": "# WHAT: send (local stand-in)\n" + `{"text":"$1"}`})
	putRows(t, n, fnRowJSON("UPPER", "upper", `["$1"]`), string(send), flowRowJSON("SHOUT", "UPPER: $1 > SEND: $PREV"))

	code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"SHOUT","body":"quiet-words"}`,
		map[string]string{"x-terminal-key": nodetest.Key, "traceparent": callerTP})
	if code != http.StatusOK || !strings.Contains(body, "sent") {
		t.Fatalf("dispatch SHOUT: %d %s", code, body)
	}
	spans := waitSpans(t, exp, callerTrace, tracing.SpanFacade, tracing.SpanAppend, tracing.SpanWorker,
		tracing.SpanRunner, tracing.SpanStep, tracing.SpanUpstream)
	if len(exp.GetSpans()) != len(spans) {
		t.Errorf("%d spans, %d of them in the caller's trace: %v", len(exp.GetSpans()), len(spans), spanNames(spans))
	}
	facade := ofName(spans, tracing.SpanFacade)[0]
	if facade.Parent.SpanID().String() != callerSpan || !facade.Parent.IsRemote() {
		t.Errorf("facade span's parent = %s, want the caller's %s", facade.Parent.SpanID(), callerSpan)
	}
	if got := len(ofName(spans, tracing.SpanStep)); got != 2 {
		t.Errorf("%d step spans, want 2", got)
	}
	if got := len(ofName(spans, tracing.SpanRunner)); got != 3 {
		t.Errorf("%d runner spans, want 3 (the flow and its two steps)", got)
	}
	// Every step is a child of the flow's runner span; each step's runner a child of its step.
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	for _, st := range ofName(spans, tracing.SpanStep) {
		if p := byID[st.Parent.SpanID()]; p.Name != tracing.SpanRunner {
			t.Errorf("step span's parent is %q, want the flow's runner span", p.Name)
		}
	}
	upSpan := ofName(spans, tracing.SpanUpstream)[0]
	got := up.Header("traceparent")
	want := "00-" + callerTrace + "-" + upSpan.SpanContext.SpanID().String() + "-01"
	if len(got) != 1 || got[0] != want {
		t.Errorf("upstream got traceparent %q, want %q (the upstream span's)", got, want)
	}
	checkNoBodies(t, spans, "quiet-words", "QUIET-WORDS", nodetest.Key)

	rc := receiptOf(t, n, invocationOf(t, body))
	if rc.TraceID != callerTrace {
		t.Errorf("receipt trace_id = %q, want %s", rc.TraceID, callerTrace)
	}
	for _, child := range rc.Children {
		if c := receiptOf(t, n, child); c.TraceID != callerTrace {
			t.Errorf("step %s trace_id = %q, want %s", child, c.TraceID, callerTrace)
		}
	}
	if code, pub := nodetest.DoKey(t, n, "GET", "/receipt/"+rc.InvocationID, "", ""); code != http.StatusOK || strings.Contains(pub, callerTrace) {
		t.Errorf("public receipt: %d %s; want it without the trace id", code, pub)
	}
}

// A traceparent that is malformed, oversized or names an all-zero id is
// ignored: the call runs, in a fresh trace, never an error.
func TestTraceHostileTraceparentStartsAFreshTrace(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	n, exp := startTracedNode(t, nil)
	row, _ := json.Marshal(map[string]any{"key": "PING", "type": "http", "target": "GET " + up.URL + "/ping", "content": "# WHAT: ping"})
	putRows(t, n, string(row))
	for i, tp := range []string{
		"garbage",
		"00-" + callerTrace + "-" + callerSpan + "-01" + strings.Repeat("-ab", 200), // oversized
		"00-00000000000000000000000000000000-" + callerSpan + "-01",                 // all-zero trace id
		"00-" + callerTrace + "-0000000000000000-01",                                // all-zero span id
		"ff-" + callerTrace + "-" + callerSpan + "-01",                              // forbidden version
		"00-" + strings.ToUpper(callerTrace) + "-" + callerSpan + "-01",             // upper-case hex
		"00-" + callerTrace + "-" + callerSpan + "-01-extra",                        // version 00 with a tail
		"00-" + callerTrace + "-" + callerSpan + "-zz",                              // flags not hex
		"",
	} {
		code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"PING","body":""}`,
			map[string]string{"x-terminal-key": nodetest.Key, "traceparent": tp})
		if code != http.StatusOK {
			t.Fatalf("traceparent %q: %d %s", tp, code, body)
		}
		rc := receiptOf(t, n, invocationOf(t, body))
		if len(rc.TraceID) != 32 || rc.TraceID == callerTrace || rc.TraceID == strings.Repeat("0", 32) {
			t.Errorf("traceparent %q: receipt trace_id %q; want a fresh trace's", tp, rc.TraceID)
		}
		spans := waitSpans(t, exp, rc.TraceID, tracing.SpanFacade, tracing.SpanWorker)
		if f := ofName(spans, tracing.SpanFacade)[0]; f.Parent.IsValid() {
			t.Errorf("traceparent %q: the facade span has parent %s; want a root", tp, f.Parent.SpanID())
		}
		if h := up.Header("traceparent"); len(h) != i+1 || !strings.Contains(h[i], rc.TraceID) {
			t.Errorf("traceparent %q: upstream got %q; want the fresh trace", tp, h)
		}
	}
}

// Tracing off (the default): no span, no traceparent sent upstream, not even
// the caller's own, and no trace id on the receipt.
func TestTraceOffSendsNoTraceparent(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	n, _ := startComposeNode(t, nil)
	row, _ := json.Marshal(map[string]any{"key": "PING", "type": "http", "target": "GET " + up.URL + "/ping", "content": "# WHAT: ping"})
	putRows(t, n, string(row), flowRowJSON("TWICE", "PING: $1 > PING: $PREV"))
	for _, key := range []string{"PING", "TWICE"} {
		code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"`+key+`","body":""}`,
			map[string]string{"x-terminal-key": nodetest.Key, "traceparent": callerTP})
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", key, code, body)
		}
		if rc := receiptOf(t, n, invocationOf(t, body)); rc.TraceID != "" {
			t.Errorf("%s: receipt trace_id %q with tracing off", key, rc.TraceID)
		}
	}
	for _, r := range up.Requests() {
		if h := r.Header.Values("traceparent"); len(h) != 0 {
			t.Errorf("upstream got traceparent %q with tracing off", h)
		}
	}
	if up.Hits() != 3 {
		t.Errorf("upstream hits = %d, want 3", up.Hits())
	}
}

// A bus client's request carries its trace in the traceparent NATS header: the
// worker continues it and the receipt names it. Without one, the call gets a
// trace of its own.
func TestTraceBusRequestCarriesTraceparent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", "client")
	}, capdir.WithTracerProvider(tp))
	putRows(t, g.n, `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`)
	c1 := g.connect(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok := wire.WithToken(busToken(t, g.n, "c1-agent", "GREET"))

	rc, err := wire.Invoke(ctx, c1.nc, "c1", "GREET", "Ada", tok, wire.WithTraceparent(callerTP))
	if err != nil || rc.Result != "Hello, Ada!" {
		t.Fatalf("bus call: %v %+v", err, rc)
	}
	spans := waitSpans(t, exp, callerTrace, tracing.SpanWorker, tracing.SpanRunner)
	if w := ofName(spans, tracing.SpanWorker)[0]; w.Parent.SpanID().String() != callerSpan {
		t.Errorf("worker span's parent = %s, want the client's %s", w.Parent.SpanID(), callerSpan)
	}
	if got := receiptOf(t, g.n, rc.InvocationID).TraceID; got != callerTrace {
		t.Errorf("receipt trace_id = %q, want %s", got, callerTrace)
	}

	// A raw publish: the trace is in the NATS header alone (the request's body
	// has no traceparent field). A valid one is continued; a hostile one is
	// ignored, and the call runs in a fresh trace.
	js, err := jetstream.New(c1.nc)
	if err != nil {
		t.Fatal(err)
	}
	const headerTrace = "0af7651916cd43dd8448eb211c80319c"
	for _, tc := range []struct{ header, want string }{
		{"00-" + headerTrace + "-b7ad6b7169203331-01", headerTrace},
		{"00-" + strings.Repeat("0", 32) + "-" + callerSpan + "-01", ""},
	} {
		subject, ev, req, err := wire.NewBusRequest("c1", "GREET", "Bob", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := wire.Encode(&ev)
		sub, err := c1.nc.SubscribeSync(wire.ReceiptNoticeSubject("c1", "GREET", req.InvocationID))
		if err != nil {
			t.Fatal(err)
		}
		m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{"traceparent": []string{tc.header}}}
		if _, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(ev.ID)); err != nil {
			t.Fatalf("publish: %v", err)
		}
		if _, err := sub.NextMsgWithContext(ctx); err != nil {
			t.Fatalf("notice: %v", err)
		}
		sub.Unsubscribe()
		got := receiptOf(t, g.n, req.InvocationID)
		switch {
		case got.Status != wire.StatusRefusedToken:
			t.Errorf("header %q: receipt %s, want the gate's refusal of no token", tc.header, got.Status)
		case tc.want != "" && got.TraceID != tc.want:
			t.Errorf("header %q: receipt trace_id %q, want the header's %s", tc.header, got.TraceID, tc.want)
		case tc.want == "" && (len(got.TraceID) != 32 || got.TraceID == strings.Repeat("0", 32)):
			t.Errorf("hostile header %q: receipt trace_id %q, want a fresh trace's", tc.header, got.TraceID)
		}
		gate := ofName(waitSpans(t, exp, got.TraceID, tracing.SpanWorker, tracing.SpanGate), tracing.SpanGate)[0]
		if check := gate.Attributes; len(check) == 0 || !strings.Contains(fmtAttrs(check), "credential") {
			t.Errorf("gate span attributes %v; want the refusing check, credential", fmtAttrs(check))
		}
	}
}

// fmtAttrs renders span attributes as key=value pairs.
func fmtAttrs(kvs []attribute.KeyValue) string {
	var b strings.Builder
	for _, kv := range kvs {
		b.WriteString(string(kv.Key) + "=" + kv.Value.Emit() + " ")
	}
	return b.String()
}

// An MCP tools/call carries the trace in its HTTP traceparent header (the fast
// path) or in its _meta (the SDK's path); the upstream MCP server is sent it.
func TestTraceMCPToolsCallCarriesTraceparent(t *testing.T) {
	srv, _ := mcptest.Server(t)
	upstream := upstreamtest.Start(t, mcptest.Handler(srv).ServeHTTP)
	n, exp := startTracedNode(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"up": {Name: "up", URL: upstream.URL}}
	})
	putRows(t, n, mcpRowJSON("HAND_ECHO", "up/echo"))
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-trace-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: traceTransport{tp: callerTP}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "HAND_ECHO", Arguments: map[string]any{"args": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	spans := waitSpans(t, exp, callerTrace, tracing.SpanFacade, tracing.SpanWorker, tracing.SpanUpstream)
	if f := ofName(spans, tracing.SpanFacade)[0]; f.Parent.SpanID().String() != callerSpan {
		t.Errorf("facade span's parent = %s, want %s", f.Parent.SpanID(), callerSpan)
	}
	upSpan := ofName(spans, tracing.SpanUpstream)[0].SpanContext.SpanID().String()
	sent := false
	for _, r := range upstream.Requests() {
		if strings.Contains(r.Body, `"tools/call"`) {
			sent = r.Header.Get("traceparent") == "00-"+callerTrace+"-"+upSpan+"-01" && strings.Contains(r.Body, upSpan)
		}
	}
	if !sent {
		t.Errorf("the upstream's tools/call did not carry the upstream span's traceparent (header and _meta)")
	}

	// A client that sends no header carries the trace in the call's _meta.
	const metaTrace = "0af7651916cd43dd8448eb211c80319c"
	plain, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: traceTransport{}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	res, err = plain.CallTool(ctx, &sdk.CallToolParams{Name: "HAND_ECHO", Arguments: map[string]any{"args": "hi"},
		Meta: sdk.Meta{"traceparent": "00-" + metaTrace + "-b7ad6b7169203331-01"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call with _meta: %v %+v", err, res)
	}
	spans = waitSpans(t, exp, metaTrace, tracing.SpanFacade, tracing.SpanWorker)
	if f := ofName(spans, tracing.SpanFacade)[0]; f.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("facade span's parent = %s, want the _meta's", f.Parent.SpanID())
	}

	// A hostile _meta traceparent (all-zero trace id, or not a string) is ignored:
	// the call runs, in a fresh trace of its own.
	for _, hostile := range []any{"00-" + strings.Repeat("0", 32) + "-b7ad6b7169203331-01", map[string]any{"x": 1}, strings.Repeat("f", 4096)} {
		before := len(ofName(exp.GetSpans(), tracing.SpanFacade))
		res, err = plain.CallTool(ctx, &sdk.CallToolParams{Name: "HAND_ECHO", Arguments: map[string]any{"args": "hi"},
			Meta: sdk.Meta{"traceparent": hostile}})
		if err != nil || res.IsError {
			t.Fatalf("tools/call with a hostile _meta: %v %+v", err, res)
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(ofName(exp.GetSpans(), tracing.SpanFacade)) == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		facades := ofName(exp.GetSpans(), tracing.SpanFacade)
		if len(facades) == before {
			t.Fatalf("hostile _meta %.40v: no facade span", hostile)
		}
		if f := facades[len(facades)-1]; f.Parent.IsValid() || f.SpanContext.TraceID().String() == strings.Repeat("0", 32) {
			t.Errorf("hostile _meta %.40v: facade span parent %s; want a fresh root", hostile, f.Parent.SpanID())
		}
	}
}

// traceTransport sends the owner key and a traceparent with every request.
type traceTransport struct{ tp string }

func (tt traceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-terminal-key", nodetest.Key)
	if tt.tp != "" {
		r.Header.Set("traceparent", tt.tp)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An agent's tool call is a step span under the agent's runner span; each model
// request is an upstream span, and the model is sent its traceparent.
func TestTraceAgentToolCallIsAChildSpan(t *testing.T) {
	model := agenttest.NewServer(t, agenttest.Call("LOOKUP", `{"args":"ada"}`), agenttest.Answer("Ada is ADA."))
	n, exp := startTracedNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, n,
		rowJSON(map[string]any{"key": "LOOKUP", "type": "fn", "target": "upper", "category": "tools", "content": "# WHAT: upper-cases a name\n[\"$1\"]"}),
		rowJSON(map[string]any{"key": "HELPER", "type": "agent", "target": "gpt-test", "allowed_categories": "tools", "content": "# WHAT: answers about names\nAnswer in one line."}),
	)
	code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"HELPER","body":"Who is ada?"}`,
		map[string]string{"x-terminal-key": nodetest.Key, "traceparent": callerTP})
	if code != http.StatusOK || !strings.Contains(body, "Ada is ADA.") {
		t.Fatalf("dispatch HELPER: %d %s", code, body)
	}
	spans := waitSpans(t, exp, callerTrace, tracing.SpanWorker, tracing.SpanStep, tracing.SpanUpstream)
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	steps := ofName(spans, tracing.SpanStep)
	if len(steps) != 1 || byID[steps[0].Parent.SpanID()].Name != tracing.SpanRunner {
		t.Fatalf("tool call spans %v; want one step under the agent's runner", spanNames(steps))
	}
	ups := ofName(spans, tracing.SpanUpstream)
	reqs := model.Requests()
	if len(ups) != 2 || len(reqs) != 2 {
		t.Fatalf("%d upstream spans, %d model requests; want 2 and 2", len(ups), len(reqs))
	}
	for i, r := range reqs {
		if tp := r.Header.Get("traceparent"); !strings.HasPrefix(tp, "00-"+callerTrace+"-") {
			t.Errorf("model request %d traceparent %q", i, tp)
		}
	}
	checkNoBodies(t, spans, "Who is ada?", "ADA")
}

// A token holder's call held for the owner's approval keeps its trace: the run
// after the approval continues the caller's trace, its upstream is sent that
// trace's traceparent, and the receipt carries the caller's trace id.
func TestTraceApprovedCallContinuesItsTrace(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, `{"paid":true}`))
	n, exp := startTracedNode(t, nil)
	tokRow(t, n, map[string]any{"key": "PAY", "type": "http", "target": "POST " + up.URL + "/pay", "sensitive": 1,
		"input_schema": `{"type":"string"}`, "content": "# WHAT: Pay an amount.\n# ARGS: $1=amount\n{\"amount\":\"$1\"}"})
	tok := mint(t, n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high","ttl_seconds":3600}`).Token
	code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"PAY","body":"10"}`,
		map[string]string{"Authorization": "Bearer " + tok, "traceparent": callerTP})
	var held struct {
		InvocationID string `json:"invocation_id"`
		Pending      bool   `json:"pending"`
	}
	if code != http.StatusAccepted || json.Unmarshal([]byte(body), &held) != nil || !held.Pending {
		t.Fatalf("token holder's call to PAY: %d %s; want 202 pending", code, body)
	}
	if code, out := nodetest.Do(t, n, "POST", "/api/approvals/"+held.InvocationID, `{"decision":"approve"}`); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, out)
	}
	if rc := receiptOf(t, n, held.InvocationID); rc.TraceID != callerTrace {
		t.Fatalf("the approved call's receipt has trace id %q, want the caller's %s", rc.TraceID, callerTrace)
	}
	waitSpans(t, exp, callerTrace, tracing.SpanUpstream)
	tps := up.Header("traceparent")
	if len(tps) != 1 || !strings.HasPrefix(tps[0], "00-"+callerTrace+"-") {
		t.Fatalf("the upstream was sent traceparent %q, want one in the caller's trace %s", tps, callerTrace)
	}
}
