package editdist

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// osaDistance is the unbounded reference: Levenshtein plus adjacent transpositions.
func osaDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j-1]+c, d[i-1][j]+1, d[i][j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func TestBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = "AB_C"[rng.IntN(4)]
		}
		return string(b)
	}
	long := strings.Repeat("ABC_", 40)
	pairs := [][2]string{{"", ""}, {"", "AB"}, {"KITTEN", "SITTING"}, {"NWO", "NOW"}, {"CA", "ABC"}, {long, long + "X"}, {long, "X" + long[1:]}}
	for range 5000 {
		pairs = append(pairs, [2]string{word(), word()})
	}
	for _, p := range pairs {
		full := osaDistance(p[0], p[1])
		for k := 0; k <= 4; k++ {
			want := min(full, k+1)
			if got := Bounded(p[0], p[1], k); got != want {
				t.Fatalf("Bounded(%q, %q, %d) = %d, want %d", p[0], p[1], k, got, want)
			}
		}
	}
}
