package bench_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/internal/bench"
)

// startPacked starts the packed reference on e's server with workers workers,
// on a connection of its own.
func startPacked(tb testing.TB, e *bench.Env, workers int) *bench.Packed {
	tb.Helper()
	nc, err := e.Node.Log().NewConn()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	p, err := bench.StartPacked(context.Background(), nc, tb.TempDir(), workers)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// TestPackedAnswersEveryCallOnceAndFoldsIt: at 64 in flight every call of the
// packed reference gets its own receipt (its own body back), every request in the
// stream has exactly one receipt, one receipt message per request message, and
// every receipt is folded into bbolt once before its caller is answered.
func TestPackedAnswersEveryCallOnceAndFoldsIt(t *testing.T) {
	e, _ := startReference(t)
	p := startPacked(t, e, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 2000
	_, _, err := bench.Drive(ctx, n, bench.Parallel, 0, func(ctx context.Context, i int) error {
		body := "call " + strconv.Itoa(i)
		rc, err := p.Call(ctx, bench.EchoKey, body)
		if err != nil {
			return err
		}
		if !rc.OK || rc.Result != body {
			return fmt.Errorf("call %d: ok=%v result %q, want %q", i, rc.OK, rc.Result, body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Folded(); got != n {
		t.Fatalf("folded %d receipts after %d calls answered, want %d", got, n, n)
	}
	stored, err := p.Stored()
	if err != nil {
		t.Fatal(err)
	}
	if stored != n {
		t.Fatalf("%d receipts in bbolt after %d calls, want %d", stored, n, n)
	}
	tl, err := p.Tally(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Requests != n || tl.Receipts != n || len(tl.Unanswered) > 0 || len(tl.Twice) > 0 || tl.RequestMsgs != tl.ReceiptMsgs {
		t.Fatalf("the stream after %d calls: %+v; want %d requests and receipts, none unanswered or twice, one receipt message per request message", n, tl, n)
	}
	t.Logf("%d calls: %d request messages, %d receipt messages", n, tl.RequestMsgs, tl.ReceiptMsgs)
}

// refDrive runs b.N operations of op at conc in flight after a warm-up and
// reports invocations/s and as a share of floor (the async publish rate measured
// in the same process), p50 and p99, the process's CPU per operation, and the
// messages and bytes the pipeline's stream stored per operation (state reads
// them).
func refDrive(b *testing.B, conc int, op bench.Op, state func(context.Context) (uint64, uint64, error), floor *float64) {
	b.Helper()
	ctx := context.Background()
	if _, _, err := bench.Drive(ctx, 200, conc, 0, op); err != nil {
		b.Fatal(err)
	}
	m0, by0, err := state(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	lat, el, err := bench.Drive(ctx, b.N, conc, 0, op)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	m1, by1, err := state(ctx)
	if err != nil {
		b.Fatal(err)
	}
	n := float64(b.N)
	rate := float64(len(lat)) / el.Seconds()
	l := bench.Summarize(lat)
	b.ReportMetric(rate, "inv/s")
	if *floor > 0 {
		b.ReportMetric(100*rate / *floor, "floor%")
	}
	b.ReportMetric(float64(l.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/op")
	b.ReportMetric(float64(m1-m0)/n, "stored/op")
	b.ReportMetric(float64(by1-by0)/n, "stream-B/op")
}

// BenchmarkPackedReference measures, in one process on one node's server, the
// async publish floor, then at 1, 16 and 64 in flight the reference pipeline
// (one event per JetStream message, bench.Reference) and the packed one
// (bench.Packed) one after the other, both called directly with capdir's default
// worker count. Run the binary several times to alternate rounds.
func BenchmarkPackedReference(b *testing.B) {
	e, err := bench.StartEnv(context.Background(), bench.EnvConfig{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	nc, err := e.Node.Log().NewConn()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	workers := dispatcher.DefaultWorkers()
	ref, err := bench.StartReference(context.Background(), nc, b.TempDir(), workers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ref.Close() })
	p := startPacked(b, e, workers)
	var floor float64
	b.Run("floor", func(b *testing.B) {
		f, err := bench.MeasureFloor(context.Background(), e.Node.Log().JetStream(), 20000, 200, 0)
		if err != nil {
			b.Fatal(err)
		}
		floor = f.Async.Rate
		b.ReportMetric(floor, "async-pub/s")
	})
	for _, conc := range []int{1, 16, bench.Parallel} {
		b.Run("one/par"+strconv.Itoa(conc), func(b *testing.B) { refDrive(b, conc, ref.Invoke(), ref.StreamState, &floor) })
		b.Run("packed/par"+strconv.Itoa(conc), func(b *testing.B) { refDrive(b, conc, p.Invoke(), p.StreamState, &floor) })
	}
}
