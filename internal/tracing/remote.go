package tracing

import (
	"context"
	"net/http"
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
	"go.opentelemetry.io/otel/trace"
)

// StateHeader is the W3C Trace Context header (and NATS header) that carries a
// trace's vendor data beside its traceparent.
const StateHeader = wire.TracestateHeader

// MaxTracestate bounds the tracestate value read, as W3C Trace Context bounds
// what a platform must propagate: a longer one is dropped, never an error.
const MaxTracestate = wire.MaxTracestateLen

// Remote reads a caller's trace context, parsed once: the zero SpanContext
// when traceparent is not valid (see Parse), else the caller's span, with its
// sampled flag as sent and tracestate as its trace state when that is valid
// (at most MaxTracestate bytes, at most 32 list members, each key and value
// well formed); an invalid tracestate is dropped silently, keeping the
// traceparent. The OpenTelemetry propagator does the parsing.
func Remote(traceparent, tracestate string) trace.SpanContext {
	if traceparent == "" || len(traceparent) > MaxTraceparent {
		return trace.SpanContext{}
	}
	if len(tracestate) > MaxTracestate {
		tracestate = ""
	}
	c := carrier{tp: traceparent, ts: tracestate}
	return trace.SpanContextFromContext(propagator.Extract(context.Background(), c))
}

// FromHeader is the trace context an HTTP request's headers carry (Remote of
// its traceparent and its tracestate, whose several lines W3C reads as one
// list).
func FromHeader(h http.Header) trace.SpanContext {
	tp := h[canonicalHeader] // read by their canonical names: no key is made per call
	if len(tp) == 0 {
		return trace.SpanContext{}
	}
	switch ts := h[canonicalStateHeader]; len(ts) {
	case 0:
		return Remote(tp[0], "")
	case 1:
		return Remote(tp[0], ts[0])
	default:
		return Remote(tp[0], strings.Join(ts, ","))
	}
}

// The headers' canonical MIME names, as http.Header keys them.
var (
	canonicalHeader      = http.CanonicalHeaderKey(Header)
	canonicalStateHeader = http.CanonicalHeaderKey(StateHeader)
)

// Tracestate is the tracestate value of the span ctx holds, "" when it holds
// no valid span or its trace has no state.
func Tracestate(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || sc.TraceState().Len() == 0 {
		return ""
	}
	return sc.TraceState().String()
}

// carrier is a carrier holding one traceparent value and its tracestate.
type carrier struct{ tp, ts string }

func (c carrier) Get(k string) string {
	switch k {
	case Header:
		return c.tp
	case StateHeader:
		return c.ts
	}
	return ""
}
func (carrier) Set(string, string) {}
func (carrier) Keys() []string     { return []string{Header, StateHeader} }
