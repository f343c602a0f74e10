package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
)

// BenchmarkGateRead is the worker's per-request projection read: Gate from the
// cache of decoded rows (against Row and Breaker read from bbolt).
func BenchmarkGateRead(b *testing.B) {
	l := logtest.Open(b, "")
	appendMix(b, l, 200)
	p := open(b, filepath.Join(b.TempDir(), "p.db"), l)
	if err := runUntil(b, p, l); err != nil {
		b.Fatal(err)
	}
	b.Run("gate", func(b *testing.B) {
		for b.Loop() {
			g := p.Gate("ROW_00003", "inv_99999")
			if g.RowErr != nil || g.HasReceipt {
				b.Fatal(g.RowErr)
			}
		}
	})
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := p.Row("ROW_00003"); err != nil {
				b.Fatal(err)
			}
			if _, err := p.Breaker("ROW_00003"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
