package mcp

import (
	"context"

	"github.com/capdir/capdir/internal/tracing"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// traceCall begins the facade's span of a tools/call of key, on the SDK's path
// and the fast path alike: a child of the trace context the HTTP request
// carries (its traceparent and tracestate headers), or of the one in the
// call's _meta, else a new trace's root. A malformed, oversized or all-zero
// traceparent is ignored, an invalid tracestate dropped; each is parsed once.
// Off, it does nothing.
func (h *Handler) traceCall(ctx context.Context, req *sdk.CallToolRequest, key string) (context.Context, tracing.Span) {
	if h.cfg.Tracer == nil {
		return ctx, tracing.Span{}
	}
	ctx, sp := h.cfg.Tracer.StartRemote(ctx, tracing.SpanFacade, callTrace(req), trace.SpanKindServer)
	sp.Str(tracing.AttrEntry, "mcp")
	sp.Str(tracing.AttrKey, key)
	return ctx, sp
}

// callTrace is the trace context a tools/call carries: its HTTP request's
// headers' when valid, else its params' _meta "traceparent" (with its
// "tracestate") when a string.
func callTrace(req *sdk.CallToolRequest) trace.SpanContext {
	if req == nil {
		return trace.SpanContext{}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		if sc := tracing.FromHeader(req.Extra.Header); sc.IsValid() {
			return sc
		}
	}
	if req.Params != nil {
		if tp, ok := req.Params.Meta[tracing.Header].(string); ok {
			ts, _ := req.Params.Meta[tracing.StateHeader].(string)
			return tracing.Remote(tp, ts)
		}
	}
	return trace.SpanContext{}
}
