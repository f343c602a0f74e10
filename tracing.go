package capdir

import (
	"context"

	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider makes the node trace its calls with tp (OpenTelemetry):
// the spans of each call's entry point, append, worker, gate refusal, runner,
// steps and upstream calls, and the trace id on its receipt. It takes
// precedence over Config.OTelEndpoint. The node never sets the global provider;
// the caller owns tp and shuts it down.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(w *wiring) { w.tracerProvider = tp }
}

// newTracer is the node's tracer: the WithTracerProvider provider, else an
// OTLP/HTTP exporter to cfg.OTelEndpoint (shut down, its last spans sent, when
// the node stops), else nil: tracing off.
func (n *Node) newTracer(cfg *Config) (*tracing.Tracer, error) {
	if n.w.tracerProvider != nil {
		return tracing.New(n.w.tracerProvider), nil
	}
	if cfg.OTelEndpoint == "" {
		return nil, nil
	}
	tp, err := tracing.OTLP(cfg.OTelEndpoint, nodeName(cfg.Name))
	if err != nil {
		return nil, err
	}
	n.onStop(func(ctx context.Context) error { return tp.Shutdown(ctx) })
	return tracing.New(tp), nil
}
