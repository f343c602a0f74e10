package bench_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capdir/capdir/internal/bench"
)

// BenchmarkTracing is BenchmarkFnHTTP's seq row with tracing off (the default:
// no provider, nothing allocated for it) and on (the SDK's provider, every
// span recorded and batched to an exporter that drops them): the cost of
// tracing per call, in time and in allocations. The off row's allocs/op equal
// BenchmarkFnHTTP/seq's.
func BenchmarkTracing(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		e := startEnv(b, false)
		driveOp(b, e, 1, e.HTTPInvoke())
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		e, err := bench.StartEnv(context.Background(), bench.EnvConfig{Dir: b.TempDir(), TracerProvider: tp})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		driveOp(b, e, 1, e.HTTPInvoke())
	})
}
