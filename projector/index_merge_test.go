package projector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOrderIndexMergeMatchesInserts checks that a batch merged in one pass leaves the
// same order as applying its changes one by one.
func TestOrderIndexMergeMatchesInserts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	merged, single := newOrderIndex(), newOrderIndex()
	for round := 0; round < 20; round++ {
		var batch []dirChange
		for i := 0; i < 1+rng.IntN(3*mergeThreshold); i++ {
			c := dirChange{key: fmt.Sprintf("K%03d", rng.IntN(200)), deleted: rng.IntN(5) == 0}
			if !c.deleted && rng.IntN(3) == 0 {
				s := int64(rng.IntN(10))
				c.seq = &s
			}
			batch = append(batch, c)
		}
		merged.apply(batch)
		for _, c := range batch {
			single.apply([]dirChange{c})
		}
		if got, want := merged.keys(), single.keys(); !slices.Equal(got, want) {
			t.Fatalf("round %d: merged order %v\nwant %v", round, got, want)
		}
		for _, k := range single.keys() {
			if merged.rank(k) != single.rank(k) || merged.rank(k) == 0 {
				t.Fatalf("round %d: rank of %s: %d, want %d", round, k, merged.rank(k), single.rank(k))
			}
		}
	}
}
