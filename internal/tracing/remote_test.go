package tracing_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/capdir/capdir/internal/tracing"
)

// A caller's tracestate is kept beside its traceparent when it is valid, and
// dropped silently (the traceparent kept) when it is oversized, has more than
// 32 list members or a malformed member.
func TestRemoteTracestate(t *testing.T) {
	members := func(n int) string {
		var m []string
		for i := range n {
			m = append(m, fmt.Sprintf("v%d=x", i))
		}
		return strings.Join(m, ",")
	}
	for _, tc := range []struct {
		name, ts, want string
	}{
		{"none", "", ""},
		{"one member", "congo=t61rcWkgMzE", "congo=t61rcWkgMzE"},
		{"two members", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"},
		{"a tenant key", "tenant@vendor=v", "tenant@vendor=v"},
		{"32 members", members(32), members(32)},
		{"33 members", members(33), ""},
		{"over 512 bytes", "a=" + strings.Repeat("b", tracing.MaxTracestate-1), ""},
		{"upper-case key", "Congo=t61", ""},
		{"no value", "congo", ""},
		{"a duplicate key", "a=1,a=2", ""},
		{"a space in the value", "a=b c\x01", ""},
	} {
		sc := tracing.Remote(valid, tc.ts)
		if !sc.IsValid() || sc.TraceID().String() != traceID {
			t.Errorf("%s: the traceparent was not kept: %v", tc.name, sc)
		}
		if got := sc.TraceState().String(); got != tc.want {
			t.Errorf("%s: tracestate %.60q, want %.60q", tc.name, got, tc.want)
		}
	}
	if sc := tracing.Remote("garbage", "congo=t61rcWkgMzE"); sc.IsValid() {
		t.Error("a tracestate without a valid traceparent made a trace context")
	}
	h := http.Header{}
	h.Set("traceparent", valid)
	h.Add("tracestate", "rojo=1")
	h.Add("tracestate", "congo=2")
	if got := tracing.FromHeader(h).TraceState().String(); got != "rojo=1,congo=2" {
		t.Errorf("FromHeader of two tracestate lines = %q, want one list", got)
	}
}

// A caller's unsampled trace (flags 00) records no span, but is the call's
// trace all the same: TraceID names it, and the upstream is sent it with the
// flags and the tracestate the caller sent (W3C: propagate, don't record).
func TestUnsampledTraceIsPropagatedNotRecorded(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := tracing.New(tp)
	parent := tracing.Remote("00-"+traceID+"-"+spanID+"-00", "congo=t61rcWkgMzE")
	ctx, sp := tr.StartRemote(context.Background(), tracing.SpanFacade, parent, trace.SpanKindServer)
	cctx, child := tracing.Child(ctx, tracing.SpanUpstream, trace.SpanKindClient)
	h := http.Header{}
	tracing.Inject(cctx, h)
	child.End()
	sp.End()
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans recorded for an unsampled trace", n)
	}
	if got := tracing.TraceID(cctx); got != traceID {
		t.Errorf("TraceID = %q, want the caller's %s", got, traceID)
	}
	got := h.Get("traceparent")
	if !strings.HasPrefix(got, "00-"+traceID+"-") || !strings.HasSuffix(got, "-00") || got == "00-"+traceID+"-"+spanID+"-00" {
		t.Errorf("upstream traceparent %q; want the caller's trace, unsampled, from capdir's span", got)
	}
	if ts := h.Get("tracestate"); ts != "congo=t61rcWkgMzE" {
		t.Errorf("upstream tracestate %q, want the caller's", ts)
	}
	if tracing.Outgoing(cctx) != got || tracing.Tracestate(cctx) != "congo=t61rcWkgMzE" {
		t.Errorf("Outgoing %q, Tracestate %q", tracing.Outgoing(cctx), tracing.Tracestate(cctx))
	}
}

// A sampled caller's tracestate reaches the upstream beside the upstream
// span's traceparent.
func TestInjectSendsTracestate(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	defer tp.Shutdown(context.Background())
	h := http.Header{}
	h.Set("traceparent", valid)
	h.Set("tracestate", "rojo=00f067aa0ba902b7")
	ctx, sp := tracing.New(tp).StartRemote(context.Background(), tracing.SpanFacade, tracing.FromHeader(h), trace.SpanKindServer)
	defer sp.End()
	out := http.Header{}
	tracing.Inject(ctx, out)
	if !strings.HasSuffix(out.Get("traceparent"), "-01") || out.Get("tracestate") != "rojo=00f067aa0ba902b7" {
		t.Errorf("injected %v", out)
	}
}
