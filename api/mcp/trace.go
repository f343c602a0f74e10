package mcp

import (
	"context"

	"github.com/capdir/capdir/internal/tracing"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// traceCall begins the facade's span of a tools/call of key, on the SDK's path
// and the fast path alike: a child of the traceparent the HTTP request carries
// (its header), or of the one in the call's _meta, else a new trace's root. A
// malformed, oversized or all-zero one is ignored. Off, it does nothing.
func (h *Handler) traceCall(ctx context.Context, req *sdk.CallToolRequest, key string) (context.Context, tracing.Span) {
	if h.cfg.Tracer == nil {
		return ctx, tracing.Span{}
	}
	ctx, sp := h.cfg.Tracer.Start(ctx, tracing.SpanFacade, callTraceparent(req), trace.SpanKindServer)
	sp.Str(tracing.AttrEntry, "mcp")
	sp.Str(tracing.AttrKey, key)
	return ctx, sp
}

// callTraceparent is the traceparent a tools/call carries: its HTTP request's
// header when valid, else its params' _meta "traceparent" when a string.
func callTraceparent(req *sdk.CallToolRequest) string {
	if req == nil {
		return ""
	}
	if req.Extra != nil && req.Extra.Header != nil {
		if tp := req.Extra.Header.Get(tracing.Header); tracing.Parse(tp).IsValid() {
			return tp
		}
	}
	if req.Params != nil {
		if tp, ok := req.Params.Meta[tracing.Header].(string); ok {
			return tp
		}
	}
	return ""
}
