package bench_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/bench"
)

// startEnv starts a node for one benchmark function and stops it at cleanup.
func startEnv(b *testing.B, natsListen bool) *bench.Env {
	b.Helper()
	e, err := bench.StartEnv(context.Background(), bench.EnvConfig{Dir: b.TempDir(), NATSListen: natsListen})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

// driveOp runs b.N operations of op at conc in flight after a warm-up and reports
// invocations/s, the p50 and p99 latencies, the process's CPU time (user and
// system, every goroutine: the load generator's and the node's) per operation and
// as a share of one core over the wall time, and per operation the messages the
// data stream stored and the node's connection to the log sent and received.
// Allocations are the whole process's: the lean clients allocate next to nothing.
func driveOp(b *testing.B, e *bench.Env, conc int, op bench.Op) {
	b.Helper()
	ctx := context.Background()
	if _, _, err := bench.Drive(ctx, 200, conc, 0, op); err != nil {
		b.Fatal(err)
	}
	nc := e.Node.Log().Conn()
	seq0 := lastDataSeq(b, e)
	st0 := nc.Stats()
	w0 := busIDWaits(b, e)
	tx0 := dataBatches(b, e)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	lat, el, err := bench.Drive(ctx, b.N, conc, 0, op)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	st := nc.Stats()
	n := float64(b.N)
	b.ReportMetric(float64(lastDataSeq(b, e)-seq0)/n, "stored/op")
	b.ReportMetric(float64(st.OutMsgs-st0.OutMsgs)/n, "msgs-out/op")
	b.ReportMetric(float64(st.InMsgs-st0.InMsgs)/n, "msgs-in/op")
	b.ReportMetric((dataBatches(b, e)-tx0)/n, "commits/op")
	if w := busIDWaits(b, e); w > w0 {
		b.ReportMetric((w-w0)/n, "id-waits/op")
	}
	l := bench.Summarize(lat)
	b.ReportMetric(float64(len(lat))/el.Seconds(), "inv/s")
	b.ReportMetric(float64(l.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(cpu.Seconds()/el.Seconds()*100, "cpu%")
}

// busIDWaits reads capdir_bus_id_waits_total: the bus requests whose id a
// worker looked up only after waiting for the projection.
func busIDWaits(b *testing.B, e *bench.Env) float64 {
	mfs, err := e.Node.Registry().Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "capdir_bus_id_waits_total" && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// dataBatches is the projection's committed batches (bbolt transactions) of
// the data stream so far.
func dataBatches(b *testing.B, e *bench.Env) float64 {
	mfs, err := e.Node.Registry().Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "capdir_projector_batch_events" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stream" && l.GetValue() == wire.DataStream {
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
}

// lastDataSeq is the data stream's last sequence.
func lastDataSeq(b *testing.B, e *bench.Env) uint64 {
	seq, err := e.Node.Log().LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		b.Fatal(err)
	}
	return seq
}

// cpuTime is the user plus system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFnHTTP is an fn row end to end: POST /api/dispatch in, the receipt out,
// one caller at a time and 64 at once, with net/http's client and (par64-lean) with
// the lean keep-alive client, whose own CPU cost is far smaller.
func BenchmarkFnHTTP(b *testing.B) {
	e := startEnv(b, false)
	b.Run("seq", func(b *testing.B) { driveOp(b, e, 1, e.HTTPInvoke()) })
	b.Run("par64", func(b *testing.B) { driveOp(b, e, bench.Parallel, e.HTTPInvoke()) })
	b.Run("par64-lean", func(b *testing.B) { driveOp(b, e, bench.Parallel, e.RawHTTPInvoke()) })
}

// BenchmarkFnMCP is an fn row end to end as an MCP client calls it: tools/call on
// one streamable HTTP session, the receipt's result in the tool result, with the
// SDK's client and (par64-lean) with the lean keep-alive client.
func BenchmarkFnMCP(b *testing.B) {
	e := startEnv(b, false)
	cs, err := e.MCPSession(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	b.Run("seq", func(b *testing.B) { driveOp(b, e, 1, bench.MCPInvoke(cs)) })
	b.Run("par64", func(b *testing.B) { driveOp(b, e, bench.Parallel, bench.MCPInvoke(cs)) })
	lean, closeLean, err := e.MCPLeanInvoke(cs)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeLean)
	b.Run("par64-lean", func(b *testing.B) { driveOp(b, e, bench.Parallel, lean) })
}

// BenchmarkFnNATS is an fn row end to end as a bus client calls it: the request
// event published to the request subject, the receipt event received; then the
// same as one request-reply to the call subject (call-…).
func BenchmarkFnNATS(b *testing.B) {
	e := startEnv(b, true)
	tok, err := e.MintToken(context.Background(), bench.BusClient, time.Hour, bench.EchoKey)
	if err != nil {
		b.Fatal(err)
	}
	nc, err := e.ConnectBus()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	bc, err := wire.NewClient(nc, bench.BusClient)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bc.Close() })
	b.Run("seq", func(b *testing.B) { driveOp(b, e, 1, bench.NATSInvoke(bc, tok)) })
	b.Run("par64", func(b *testing.B) { driveOp(b, e, bench.Parallel, bench.NATSInvoke(bc, tok)) })
	b.Run("call-seq", func(b *testing.B) { driveOp(b, e, 1, bench.NATSCall(nc, tok)) })
	b.Run("call-par64", func(b *testing.B) { driveOp(b, e, bench.Parallel, bench.NATSCall(nc, tok)) })
}

// BenchmarkPublishFloor is the raw JetStream async publish rate of a request-sized
// message on a node's store: the ceiling of the rows above.
func BenchmarkPublishFloor(b *testing.B) {
	e := startEnv(b, false)
	b.ResetTimer()
	f, err := bench.MeasureFloor(context.Background(), e.Node.Log().JetStream(), max(b.N, 1000), 1000, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(f.Async.Rate, "async-pub/s")
	b.ReportMetric(f.Sync.Rate, "sync-pub/s")
}
