// Package tracing follows one call through capdir as one W3C trace
// (OpenTelemetry): the entry point (HTTP, MCP, the bus), the append of its
// request, the worker, the gate's refusal, the runner, each step, and the
// upstream call, which is sent the trace's traceparent header.
//
// Tracing is off unless a node is given an endpoint or a tracer provider. Off,
// the Tracer is nil: no global provider is set, no span is made, no header is
// read or sent, and every function here returns at once without allocating, so
// the dispatch path costs what it cost without tracing.
//
// A span carries names, keys, statuses and ids only: never a secret, a body, a
// result or a credential.
package tracing

import (
	"context"
	"net/http"

	"github.com/capdir/capdir/eventlog/wire"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Header is the W3C Trace Context header (and NATS header) that carries a trace.
const Header = wire.TraceparentHeader

// MaxTraceparent bounds the traceparent value read: the version-00 form is 55
// characters; a longer one (a later version's extra fields) is read up to this
// many, and anything longer is ignored as hostile.
const MaxTraceparent = wire.MaxTraceparentLen

// Scope is the instrumentation scope capdir's spans are made under.
const Scope = "github.com/capdir/capdir"

// Span names.
const (
	SpanFacade   = "capdir.facade"   // an HTTP or MCP call, from arrival to answer
	SpanAppend   = "capdir.append"   // the request event's append to the log
	SpanWorker   = "capdir.worker"   // a worker's handling of one request
	SpanGate     = "capdir.gate"     // a gate check that refused the call
	SpanRunner   = "capdir.runner"   // the runner of the call's row
	SpanStep     = "capdir.step"     // a flow's step or an agent's tool call
	SpanUpstream = "capdir.upstream" // the http or mcp runner's call to its upstream
)

// Attribute keys.
const (
	AttrKey          = "capdir.key"           // the row's key
	AttrInvocation   = "capdir.invocation_id" // the call's invocation id
	AttrRunner       = "capdir.runner"        // the row's effective runner
	AttrStatus       = "capdir.status"        // the receipt's status
	AttrCheck        = "capdir.gate.check"    // the gate check that refused
	AttrEntry        = "capdir.entry"         // http or mcp
	AttrStep         = "capdir.step"          // a step's name in its flow or agent
	AttrUpstream     = "capdir.upstream"      // the upstream's origin or MCP upstream name
	AttrUpstreamCode = "capdir.upstream_status"
)

var propagator = propagation.TraceContext{}

// Tracer starts capdir's spans. A nil *Tracer is tracing off.
type Tracer struct {
	t trace.Tracer
}

// New is a Tracer over tp; nil when tp is nil (tracing off).
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(Scope)}
}

// Start begins span name: a child of the span ctx holds, else of the remote
// parent traceparent names (when it is a valid W3C traceparent: a malformed,
// oversized or all-zero one is ignored, never an error), else a new trace's
// root. Off, it returns ctx and a Span that does nothing. StartRemote is the
// same for a parent read already (Remote).
func (t *Tracer) Start(ctx context.Context, name, traceparent string, kind trace.SpanKind) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	var parent trace.SpanContext
	if !trace.SpanContextFromContext(ctx).IsValid() {
		parent = Parse(traceparent)
	}
	return t.StartRemote(ctx, name, parent, kind)
}

// StartRemote begins span name: a child of the span ctx holds, else of parent
// when it is valid (a caller's trace context, as Remote reads it: its sampled
// flag and tracestate are kept), else a new trace's root. An unsampled parent
// gives a span that records nothing but keeps the trace, so the trace is
// propagated, not recorded. Off, it returns ctx and a Span that does nothing.
func (t *Tracer) StartRemote(ctx context.Context, name string, parent trace.SpanContext, kind trace.SpanKind) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	if parent.IsValid() && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	ctx, s := t.t.Start(ctx, name, trace.WithSpanKind(kind))
	return ctx, Span{s: s}
}

// Child begins span name as a child of the recording span ctx holds, with that
// span's provider; with none (tracing off, or a call outside any trace) it
// returns ctx and a Span that does nothing.
func Child(ctx context.Context, name string, kind trace.SpanKind) (context.Context, Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, Span{}
	}
	ctx, s := parent.TracerProvider().Tracer(Scope).Start(ctx, name, trace.WithSpanKind(kind))
	return ctx, Span{s: s}
}

// Parse reads a traceparent value: the zero SpanContext when it is empty,
// longer than MaxTraceparent, malformed, or names an all-zero trace or span id.
func Parse(traceparent string) trace.SpanContext {
	return Remote(traceparent, "")
}

// Traceparent is the traceparent value of the span ctx holds, recording or not
// (an unsampled caller's trace keeps its flags), "" when it holds no valid one.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	var c capture
	propagator.Inject(ctx, &c)
	return c.tp
}

// Outgoing is the traceparent an upstream call made under ctx sends: that of
// the span ctx holds, "" when it holds none (tracing off), so a call made with
// tracing off sends no traceparent at all. A call in a caller's unsampled
// trace sends it unsampled, as the caller did: propagated, not recorded.
func Outgoing(ctx context.Context) string {
	return Traceparent(ctx)
}

// Inject sets h's traceparent to Outgoing(ctx), and its tracestate to
// Tracestate(ctx), when they are not empty.
func Inject(ctx context.Context, h http.Header) {
	if tp := Outgoing(ctx); tp != "" {
		h.Set(Header, tp)
		if ts := Tracestate(ctx); ts != "" {
			h.Set(StateHeader, ts)
		}
	}
}

// TraceID is the hex trace id of the span ctx holds, recording or not (an
// unsampled caller's trace is still the call's trace), "" when it holds none.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// Span is one span; the zero Span (tracing off) does nothing.
type Span struct {
	s trace.Span
}

// On reports whether the span records (tracing is on for its call).
func (s Span) On() bool { return s.s != nil }

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// Str sets the string attribute k to v. v is never a secret nor a body.
func (s Span) Str(k, v string) {
	if s.s != nil {
		s.s.SetAttributes(attribute.String(k, v))
	}
}

// Int sets the integer attribute k to v.
func (s Span) Int(k string, v int) {
	if s.s != nil {
		s.s.SetAttributes(attribute.Int(k, v))
	}
}

// Traceparent is the span's traceparent value; "" for the zero Span.
func (s Span) Traceparent() string {
	if s.s == nil {
		return ""
	}
	return Traceparent(trace.ContextWithSpan(context.Background(), s.s))
}

// Fail marks the span as ended in error, described by status (a receipt status
// or a refusal's literal code, never a result).
func (s Span) Fail(status string) {
	if s.s != nil {
		s.s.SetStatus(codes.Error, status)
	}
}

// capture is a carrier keeping the trace context injected into it.
type capture struct{ tp, ts string }

func (c *capture) Get(string) string { return "" }
func (c *capture) Set(k, v string) {
	switch k {
	case Header:
		c.tp = v
	case StateHeader:
		c.ts = v
	}
}
func (c *capture) Keys() []string { return nil }
