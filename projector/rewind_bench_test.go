package projector_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/internal/bench"
	"github.com/capdir/capdir/projector"
)

// BenchmarkRewind folds the directory at points of a control stream of directory
// mutations (DirectoryAt), reads its first page of 100 rows as the API does, and
// reports the time of one rewind: "snapshot", by a
// projection that folded the stream and keeps its snapshots (the nearest one
// loaded, the events after it folded), at a point that moves back by 997 events
// each time, from the middle; "log", by a projection that folded nothing, so each
// rewind folds the stream from its start; "again", at the sequence of the rewind
// before (which the projector keeps). It reports the snapshots' count and size
// beside the log's events and rows. By default the directory has 10k rows and the
// stream 100k events; CAPDIR_BENCH_REWIND=full makes them 100k rows and 1M events
// (minutes to generate and fold).
func BenchmarkRewind(b *testing.B) {
	rows, events := 10_000, 100_000
	if os.Getenv("CAPDIR_BENCH_REWIND") == "full" {
		rows, events = 100_000, 1_000_000
	}
	ctx := context.Background()
	l := logtest.Open(b, "")
	n, err := bench.GenerateDirectory(ctx, l, rows, events)
	if err != nil {
		b.Fatal(err)
	}
	openP := func(name string) *projector.Projector {
		p, err := projector.Open(projector.Config{Path: filepath.Join(b.TempDir(), name), Log: l})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close() })
		return p
	}
	folded, bare := openP("folded.db"), openP("bare.db")
	if err := folded.CatchUp(ctx, nil); err != nil {
		b.Fatal(err)
	}
	rewind := func(b *testing.B, p *projector.Projector, seq uint64) {
		snap, err := p.DirectoryAt(ctx, projector.Point{Seq: seq})
		if err != nil {
			b.Fatal(err)
		}
		// The first page, as GET /api/directory?at= answers by default.
		rows, total, err := snap.List(projector.Filter{}, 0, 100)
		if err != nil {
			b.Fatal(err)
		}
		if total == 0 || len(rows) == 0 {
			b.Fatal("an empty directory")
		}
	}
	b.Run("snapshot", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rewind(b, folded, uint64(n/2-997*(i%(n/2/997))))
		}
		count, size := projector.SnapshotsSize(folded)
		b.ReportMetric(float64(n), "log-events")
		b.ReportMetric(float64(rows), "rows")
		b.ReportMetric(float64(count), "snapshots")
		b.ReportMetric(float64(size)/1e6, "snapshot-MB")
	})
	b.Run("log", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rewind(b, bare, uint64(n/2-i))
		}
	})
	b.Run("again", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rewind(b, folded, uint64(n/2))
		}
	})
}
