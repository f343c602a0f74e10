package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// allocRounds is how many sequential calls each side's allocations are counted over.
const allocRounds = 500

// Tracing measures fn over POST /api/dispatch on two nodes started side by
// side from cfg: one with tracing off (the default) and one tracing every call
// (the OpenTelemetry SDK's provider, every span recorded and handed to a batch
// span processor whose exporter drops them), interleaved (Paired) at 1 and par
// in flight. Each on row notes its rate as a ratio to the off row measured with
// it; each row at 1 in flight also notes the allocations and bytes of one call,
// counted over allocRounds sequential calls of that node alone (the whole
// process: load generator and both nodes).
func Tracing(ctx context.Context, cfg EnvConfig, nSeq, nPar, par int, budget time.Duration) ([]Result, error) {
	dir := cfg.Dir
	cfg.Dir = dir + "/off"
	off, err := StartEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer off.Close()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	cfg.Dir, cfg.TracerProvider = dir+"/on", tp
	on, err := StartEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer on.Close()
	var out []Result
	for _, c := range []struct{ conc, n int }{{1, nSeq}, {par, nPar}} {
		in := strconv.Itoa(c.conc) + " in flight"
		a, b, err := Paired(ctx, ScenarioTracing, "fn via POST /api/dispatch, "+in+", tracing off", "fn via POST /api/dispatch, "+in+", tracing on",
			off.HTTPInvoke(), on.HTTPInvoke(), c.n, c.conc, budget)
		if err != nil {
			return nil, err
		}
		b.noteRatio(a, "the rate off", "off_ratio")
		if c.conc == 1 {
			if err := noteAllocs(ctx, &a, off); err != nil {
				return nil, err
			}
			if err := noteAllocs(ctx, &b, on); err != nil {
				return nil, err
			}
		}
		out = append(out, a, b)
	}
	return out, nil
}

// noteAllocs adds to r the allocations and bytes one call of e's costs the
// process, counted over allocRounds sequential calls.
func noteAllocs(ctx context.Context, r *Result, e *Env) error {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, err := Drive(ctx, allocRounds, 1, 0, e.HTTPInvoke()); err != nil {
		return fmt.Errorf("bench: %s allocations: %w", ScenarioTracing, err)
	}
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / allocRounds
	bytes := float64(after.TotalAlloc-before.TotalAlloc) / allocRounds
	note := fmt.Sprintf("%.0f allocs, %.1f kB per call", allocs, bytes/1024)
	if r.Note != "" {
		note = r.Note + "; " + note
	}
	r.Note = note
	if r.Values == nil {
		r.Values = map[string]float64{}
	}
	r.Values["allocs_per_call"], r.Values["bytes_per_call"] = allocs, bytes
	return nil
}
