package tracing_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/capdir/capdir/internal/allocstest"
	"github.com/capdir/capdir/internal/tracing"
)

const (
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanID  = "00f067aa0ba902b7"
	valid   = "00-" + traceID + "-" + spanID + "-01"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, tp string
		ok       bool
	}{
		{"version 00", valid, true},
		{"not sampled", "00-" + traceID + "-" + spanID + "-00", true},
		{"a later version's extra field", "01-" + traceID + "-" + spanID + "-01-what", true},
		{"empty", "", false},
		{"garbage", "garbage", false},
		{"oversized", valid + "-" + strings.Repeat("a", tracing.MaxTraceparent), false},
		{"all-zero trace id", "00-" + strings.Repeat("0", 32) + "-" + spanID + "-01", false},
		{"all-zero span id", "00-" + traceID + "-" + strings.Repeat("0", 16) + "-01", false},
		{"version ff", "ff-" + traceID + "-" + spanID + "-01", false},
		{"upper-case hex", "00-" + strings.ToUpper(traceID) + "-" + spanID + "-01", false},
		{"version 00 with a tail", valid + "-x", false},
		{"short trace id", "00-" + traceID[1:] + "-" + spanID + "-01", false},
		{"flags not hex", "00-" + traceID + "-" + spanID + "-zz", false},
	} {
		sc := tracing.Parse(tc.tp)
		if sc.IsValid() != tc.ok {
			t.Errorf("%s: Parse(%.80q) valid = %v, want %v", tc.name, tc.tp, sc.IsValid(), tc.ok)
		}
		if tc.ok && (sc.TraceID().String() != traceID || sc.SpanID().String() != spanID || !sc.IsRemote()) {
			t.Errorf("%s: Parse = %s/%s remote %v", tc.name, sc.TraceID(), sc.SpanID(), sc.IsRemote())
		}
	}
}

// Off (a nil Tracer, a context without a span) nothing is made, nothing is
// injected, and nothing is allocated.
func TestOffIsFree(t *testing.T) {
	var tr *tracing.Tracer
	ctx := context.Background()
	h := http.Header{}
	allocs := allocstest.PerRun(t, 100, func() {
		c, sp := tr.Start(ctx, tracing.SpanWorker, valid, trace.SpanKindConsumer)
		c, remote := tr.StartRemote(c, tracing.SpanWorker, trace.SpanContext{}, trace.SpanKindConsumer)
		c, child := tracing.Child(c, tracing.SpanRunner, trace.SpanKindInternal)
		child.Str(tracing.AttrKey, "KEY")
		child.Int(tracing.AttrUpstreamCode, 200)
		child.Fail("RAN_WITH_ERROR")
		tracing.Inject(c, h)
		if tracing.TraceID(c) != "" || tracing.Outgoing(c) != "" || tracing.Tracestate(c) != "" || child.Traceparent() != "" {
			t.Fatal("a trace with tracing off")
		}
		child.End()
		remote.End()
		sp.End()
	})
	if allocs != 0 {
		t.Errorf("tracing off allocates %v per call", allocs)
	}
	if len(h) != 0 {
		t.Errorf("tracing off injected %v", h)
	}
	if tracing.New(nil) != nil {
		t.Error("New(nil) is not off")
	}
}

// On, Start continues a valid remote parent, a child joins its trace, and the
// outgoing traceparent is the child's own span.
func TestStartContinuesTheCallersTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := tracing.New(tp)
	ctx, sp := tr.Start(context.Background(), tracing.SpanFacade, valid, trace.SpanKindServer)
	cctx, child := tracing.Child(ctx, tracing.SpanUpstream, trace.SpanKindClient)
	h := http.Header{}
	tracing.Inject(cctx, h)
	gotID := tracing.TraceID(cctx)
	child.End()
	sp.End()
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	up, facade := spans[0], spans[1]
	if facade.Parent.SpanID().String() != spanID || facade.SpanContext.TraceID().String() != traceID {
		t.Errorf("facade parent %s trace %s", facade.Parent.SpanID(), facade.SpanContext.TraceID())
	}
	if up.Parent.SpanID() != facade.SpanContext.SpanID() {
		t.Errorf("child's parent %s, want the facade's %s", up.Parent.SpanID(), facade.SpanContext.SpanID())
	}
	if want := "00-" + traceID + "-" + up.SpanContext.SpanID().String() + "-01"; h.Get("traceparent") != want {
		t.Errorf("injected %q, want %q", h.Get("traceparent"), want)
	}
	if gotID != traceID {
		t.Errorf("TraceID = %q", gotID)
	}
	// A hostile parent starts a fresh root instead.
	_, root := tr.Start(context.Background(), tracing.SpanFacade, "00-"+strings.Repeat("0", 32)+"-"+spanID+"-01", trace.SpanKindServer)
	root.End()
	if s := exp.GetSpans()[2]; s.Parent.IsValid() || s.SpanContext.TraceID().String() == traceID {
		t.Errorf("hostile parent: parent %v trace %s", s.Parent.IsValid(), s.SpanContext.TraceID())
	}
}

func TestCheckEndpoint(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://localhost:4318", true},
		{"https://collector.example:4318/v1/traces", true},
		{"localhost:4318", false},
		{"grpc://localhost:4317", false},
		{"http://", false},
		{"", false},
	} {
		if err := tracing.CheckEndpoint(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckEndpoint(%q) = %v", tc.url, err)
		}
	}
}

// BenchmarkSpans is a call's spans with tracing off and on.
func BenchmarkSpans(b *testing.B) {
	run := func(b *testing.B, tr *tracing.Tracer) {
		h := http.Header{}
		b.ReportAllocs()
		for b.Loop() {
			ctx, sp := tr.Start(context.Background(), tracing.SpanWorker, valid, trace.SpanKindConsumer)
			rctx, run := tracing.Child(ctx, tracing.SpanRunner, trace.SpanKindInternal)
			run.Str(tracing.AttrKey, "KEY")
			uctx, up := tracing.Child(rctx, tracing.SpanUpstream, trace.SpanKindClient)
			tracing.Inject(uctx, h)
			up.End()
			run.End()
			sp.End()
		}
	}
	b.Run("off", func(b *testing.B) { run(b, nil) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer tp.Shutdown(context.Background())
		run(b, tracing.New(tp))
	})
}
