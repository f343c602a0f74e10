package api

import (
	"net/http"

	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// traceFacade begins the facade's span of a dispatch (POST /api/dispatch and the
// RUN NOW form GET /api/dispatch?key=) of key: a child of the caller's
// traceparent header (with its tracestate) when it holds a valid one, read
// once, else a new trace's root. The request's append and the worker's spans
// continue it. Off, it does nothing.
func (s *Server) traceFacade(r *http.Request, key string) (*http.Request, tracing.Span) {
	if s.cfg.Tracer == nil {
		return r, tracing.Span{}
	}
	ctx, sp := s.cfg.Tracer.StartRemote(r.Context(), tracing.SpanFacade, tracing.FromHeader(r.Header), trace.SpanKindServer)
	sp.Str(tracing.AttrEntry, "http")
	sp.Str(tracing.AttrKey, key)
	return r.WithContext(ctx), sp
}
