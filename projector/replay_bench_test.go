package projector_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/internal/bench"
)

// BenchmarkReplay rebuilds a fresh bbolt projection from a log of at least
// bench.ReplayEvents events (the size of capdir bench's full run) of the mix
// bench.GenerateLog writes (directory mutations, requests, receipts) and reports events/s, CPU and allocations per event (the whole
// process's, the log's server included). The log is generated once, outside the
// timer.
func BenchmarkReplay(b *testing.B) { benchmarkReplay(b, bench.GenerateLog) }

// BenchmarkReplayPacked is BenchmarkReplay over a log whose requests and
// receipts are packed as capdir packs them under load (bench.GeneratePackedLog).
func BenchmarkReplayPacked(b *testing.B) { benchmarkReplay(b, bench.GeneratePackedLog) }

func benchmarkReplay(b *testing.B, generate func(context.Context, *eventlog.Log, int) (int, error)) {
	l := logtest.Open(b, "")
	n, err := generate(context.Background(), l, bench.ReplayEvents)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "projection.db")
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		os.Remove(path)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		cpu0 := bench.CPUTime()
		el, err := bench.MeasureRebuild(context.Background(), l, path)
		if err != nil {
			b.Fatal(err)
		}
		got := n
		events += got
		b.ReportMetric(float64(got)/el.Seconds(), "events/s")
		// CPU per event is steadier than wall time on a shared machine.
		b.ReportMetric(float64((bench.CPUTime()-cpu0).Microseconds())/float64(got), "cpu-µs/event")
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(got), "allocs/event")
		if fi, err := os.Stat(path); err == nil {
			b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
		}
	}
	b.ReportMetric(float64(n), "log-events")
}
