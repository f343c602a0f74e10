package dispatcher

import (
	"context"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// A call's spans (package internal/tracing): the append of its request, as a
// child of the entry point's span in ctx; the worker's, continuing the trace
// the request carries (its traceparent field, or a bus client's traceparent
// NATS header); under it a span for the gate check that refused, or the
// runner's, whose steps and upstream calls are its children. Off (no Tracer,
// no span in ctx), each of these returns at once and allocates nothing.

// traceAppend begins the span of req's append and records its trace context on
// req, so that the worker that takes the request, on any node, continues it.
func traceAppend(ctx context.Context, req *wire.InvocationRequest) tracing.Span {
	_, sp := tracing.Child(ctx, tracing.SpanAppend, trace.SpanKindProducer)
	if recordTrace(ctx, sp, req) && sp.On() {
		sp.Str(tracing.AttrKey, req.Key)
		if req.InvocationID != "" {
			sp.Str(tracing.AttrInvocation, req.InvocationID)
		}
	}
	return sp
}

// recordTrace sets req's trace context to sp's, or, when sp records nothing
// (a caller's unsampled trace), to that of the span ctx holds: such a trace is
// propagated, not recorded, and the worker and the upstream continue it with
// the flags and tracestate the caller sent. It reports whether it set one.
func recordTrace(ctx context.Context, sp tracing.Span, req *wire.InvocationRequest) bool {
	tp := sp.Traceparent()
	if tp == "" {
		tp = tracing.Traceparent(ctx)
	}
	if tp == "" {
		return false
	}
	req.Traceparent, req.Tracestate = tp, tracing.Tracestate(ctx)
	return true
}

// traceWorker begins the worker's span of req, delivered as m: a child of the
// trace m's traceparent NATS header names (with its tracestate header), else
// of the one req carries, else a new trace's root (a malformed, oversized or
// all-zero one is ignored). Each is parsed once.
func (s *Service) traceWorker(ctx context.Context, m eventlog.Msg, req *wire.InvocationRequest) (context.Context, tracing.Span) {
	if s.cfg.Tracer == nil {
		return ctx, tracing.Span{}
	}
	parent := tracing.Remote(eventlog.Traceparent(m), eventlog.Tracestate(m))
	if !parent.IsValid() {
		parent = tracing.Remote(req.Traceparent, req.Tracestate)
	}
	ctx, sp := s.cfg.Tracer.StartRemote(ctx, tracing.SpanWorker, parent, trace.SpanKindConsumer)
	sp.Str(tracing.AttrKey, req.Key)
	sp.Str(tracing.AttrInvocation, req.InvocationID)
	return ctx, sp
}

// traceRefusal records the gate check that refused the call as a span of its own.
func traceRefusal(ctx context.Context, r *gate.Refusal) {
	_, sp := tracing.Child(ctx, tracing.SpanGate, trace.SpanKindInternal)
	sp.Str(tracing.AttrCheck, r.Check)
	sp.Str(tracing.AttrStatus, r.Status)
	sp.Fail(r.Status)
	sp.End()
}

// traceRunner begins the span of row's runner.
func traceRunner(ctx context.Context, row *contract.Row) (context.Context, tracing.Span) {
	ctx, sp := tracing.Child(ctx, tracing.SpanRunner, trace.SpanKindInternal)
	if sp.On() {
		sp.Str(tracing.AttrKey, row.Key)
		sp.Str(tracing.AttrRunner, row.EffectiveRunner())
	}
	return ctx, sp
}

// endRunner ends a runner's span with the call's outcome: its status, and the
// upstream's HTTP status when it has one.
func endRunner(sp tracing.Span, d *draft) {
	if !sp.On() {
		return
	}
	sp.Str(tracing.AttrStatus, d.Status)
	if d.Upstream != 0 {
		sp.Int(tracing.AttrUpstreamCode, d.Upstream)
	}
	if !d.OK {
		sp.Fail(d.Status)
	}
	sp.End()
}

// traceStep begins the span of a step (a flow's, an agent's tool call) as a
// child of its caller's runner, and records its trace context on req.
func traceStep(ctx context.Context, name string, req *wire.InvocationRequest) (context.Context, tracing.Span) {
	ctx, sp := tracing.Child(ctx, tracing.SpanStep, trace.SpanKindInternal)
	if recordTrace(ctx, sp, req) && sp.On() {
		sp.Str(tracing.AttrKey, req.Key)
		sp.Str(tracing.AttrInvocation, req.InvocationID)
		sp.Str(tracing.AttrStep, name)
	}
	return ctx, sp
}

// heldTrace folds the trace context a held bus request carried in its NATS
// headers alone (a client that set no traceparent field) into req, so that
// the approved call's run continues that trace. The headers are read as the
// worker reads them: one that is not a valid traceparent is ignored, an
// invalid tracestate dropped.
func heldTrace(req *wire.InvocationRequest, traceparent, tracestate string) {
	if req.Traceparent != "" {
		return
	}
	sc := tracing.Remote(traceparent, tracestate)
	if !sc.IsValid() {
		return
	}
	req.Traceparent, req.Tracestate = traceparent, ""
	if sc.TraceState().Len() > 0 {
		req.Tracestate = tracestate
	}
}

// Unwrap is the delivery m tracks (eventlog.Traceparent reads its headers).
func (m trackedMsg) Unwrap() eventlog.Msg { return m.Msg }
