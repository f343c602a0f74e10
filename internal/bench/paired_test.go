package bench

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// Paired runs its two operations in alternating slices after a warm-up of each,
// and each result counts its own operations only.
func TestPairedInterleaves(t *testing.T) {
	var mu sync.Mutex
	var order strings.Builder
	op := func(name byte) Op {
		return func(context.Context, int) error {
			mu.Lock()
			order.WriteByte(name)
			mu.Unlock()
			return nil
		}
	}
	a, b, err := Paired(context.Background(), "test", "A", "B", op('a'), op('b'), 16, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	warm := strings.Repeat("a", 200) + strings.Repeat("b", 200)
	if got := order.String(); got != warm+strings.Repeat("aabb", pairRounds) {
		t.Errorf("order %q, want the warm-ups then %d alternating slices", got, pairRounds)
	}
	if a.Name != "A" || b.Name != "B" || a.Ops != 16 || b.Ops != 16 || a.Rate <= 0 || b.Rate <= 0 {
		t.Errorf("results %+v %+v", a, b)
	}
}
