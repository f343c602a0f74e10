package projector

import (
	"bytes"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// The slices an arena hands out never share a byte: each is filled whole, with
// its cap at what was asked, so an append past it copies instead of writing
// into the next; a slice too large for a chunk is allocated on its own; and
// after reset the same takes reuse the chunks, allocating nothing.
func TestArenaHandsOutDisjointSlicesAndReusesThem(t *testing.T) {
	var a arena
	sizes := []int{1, 700, 12, foldArenaChunk / 4, foldArenaChunk/4 + 1, 3000, foldArenaChunk - 10, 5}
	fill := func() [][]byte {
		var got [][]byte
		for i, n := range sizes {
			s := a.take(n)
			if len(s) != 0 || cap(s) != n {
				t.Fatalf("take(%d): len %d cap %d", n, len(s), cap(s))
			}
			got = append(got, append(s, bytes.Repeat([]byte{byte(i + 1)}, n)...))
		}
		return got
	}
	got := fill()
	for i, s := range got {
		if !bytes.Equal(s, bytes.Repeat([]byte{byte(i + 1)}, sizes[i])) {
			t.Fatalf("slice %d (%d bytes) was written over by another", i, sizes[i])
		}
	}
	grown := append(got[0], 0xff)
	if got[1][0] != 2 {
		t.Fatal("an append past a slice's cap wrote into the next slice")
	}
	_ = grown
	chunks := len(a.chunks)
	a.reset()
	if allocs := allocstest.PerRun(t, 5, func() {
		a.reset()
		for _, n := range sizes {
			if n <= foldArenaChunk/4 {
				a.take(n)
			}
		}
	}); allocs != 0 {
		t.Errorf("takes after reset allocated %v times, want none", allocs)
	}
	if len(a.chunks) != chunks {
		t.Errorf("the arena grew from %d chunks to %d after reset", chunks, len(a.chunks))
	}
	var none *arena
	if s := none.take(9); len(s) != 0 || cap(s) != 9 {
		t.Errorf("a nil arena's take(9): len %d cap %d", len(s), cap(s))
	}
}
