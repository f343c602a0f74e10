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

// BenchmarkRewind folds the directory at the middle of a control stream of
// directory mutations (DirectoryAt) and reports the time of one rewind: cold,
// and at the sequence of the rewind before (which the projector keeps). By default
// the directory has 10k rows and the stream 100k events; CAPDIR_BENCH_REWIND=full
// makes them 100k rows and 1M events (minutes to generate).
func BenchmarkRewind(b *testing.B) {
	rows, events := 10_000, 100_000
	if os.Getenv("CAPDIR_BENCH_REWIND") == "full" {
		rows, events = 100_000, 1_000_000
	}
	l := logtest.Open(b, "")
	n, err := bench.GenerateDirectory(context.Background(), l, rows, events)
	if err != nil {
		b.Fatal(err)
	}
	p, err := projector.Open(projector.Config{Path: filepath.Join(b.TempDir(), "p.db"), Log: l})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	rewind := func(b *testing.B, seq uint64) {
		snap, err := p.DirectoryAt(context.Background(), projector.Point{Seq: seq})
		if err != nil {
			b.Fatal(err)
		}
		if snap.Len() == 0 {
			b.Fatal("an empty directory")
		}
	}
	// cold: each rewind is to a sequence before the last one, so it folds the
	// stream from its start; again: the sequence of the last rewind, kept.
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rewind(b, uint64(n/2-i))
		}
		b.ReportMetric(float64(n), "log-events")
		b.ReportMetric(float64(rows), "rows")
	})
	b.Run("again", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rewind(b, uint64(n/2))
		}
	})
}
