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
	if tp := sp.Traceparent(); tp != "" {
		req.Traceparent = tp
		sp.Str(tracing.AttrKey, req.Key)
		if req.InvocationID != "" {
			sp.Str(tracing.AttrInvocation, req.InvocationID)
		}
	}
	return sp
}

// traceWorker begins the worker's span of req, delivered as m: a child of the
// trace m's traceparent NATS header names, else of the one req carries, else a
// new trace's root (a malformed, oversized or all-zero one is ignored).
func (s *Service) traceWorker(ctx context.Context, m eventlog.Msg, req *wire.InvocationRequest) (context.Context, tracing.Span) {
	if s.cfg.Tracer == nil {
		return ctx, tracing.Span{}
	}
	tp := eventlog.Traceparent(m)
	if !tracing.Parse(tp).IsValid() {
		tp = req.Traceparent
	}
	ctx, sp := s.cfg.Tracer.Start(ctx, tracing.SpanWorker, tp, trace.SpanKindConsumer)
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
	if tp := sp.Traceparent(); tp != "" {
		req.Traceparent = tp
		sp.Str(tracing.AttrKey, req.Key)
		sp.Str(tracing.AttrInvocation, req.InvocationID)
		sp.Str(tracing.AttrStep, name)
	}
	return ctx, sp
}

// Unwrap is the delivery m tracks (eventlog.Traceparent reads its headers).
func (m trackedMsg) Unwrap() eventlog.Msg { return m.Msg }
