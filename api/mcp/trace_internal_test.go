package mcp

import (
	"context"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capdir/capdir/internal/allocstest"
	"github.com/capdir/capdir/internal/tracing"
)

// A tools/call's traceparent is parsed once, wherever it came from: a call
// whose trace is in its HTTP header costs what one whose trace is in its _meta
// does, and both continue the caller's trace.
func TestTraceCallParsesTheTraceparentOnce(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" // unsampled: no span recorded
	prov := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	defer prov.Shutdown(context.Background())
	h := &Handler{cfg: Config{Tracer: tracing.New(prov)}}
	header := &sdk.CallToolRequest{Extra: &sdk.RequestExtra{Header: http.Header{"Traceparent": {tp}}}, Params: &sdk.CallToolParamsRaw{}}
	meta := &sdk.CallToolRequest{Extra: &sdk.RequestExtra{Header: http.Header{}}, Params: &sdk.CallToolParamsRaw{Meta: sdk.Meta{"traceparent": tp}}}
	allocs := map[string]float64{}
	for name, req := range map[string]*sdk.CallToolRequest{"header": header, "_meta": meta} {
		ctx, sp := h.traceCall(context.Background(), req, "KEY")
		sp.End()
		if got := tracing.TraceID(ctx); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %q, want the caller's", name, got)
		}
		allocs[name] = allocstest.PerRun(t, 200, func() {
			_, sp := h.traceCall(context.Background(), req, "KEY")
			sp.End()
		})
	}
	if allocs["header"] != allocs["_meta"] {
		t.Errorf("a header traceparent costs %v allocations, a _meta one %v: the header's is parsed twice", allocs["header"], allocs["_meta"])
	}
}
