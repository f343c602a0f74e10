// Package editdist measures how far apart two strings are, for suggestions: the
// did_you_mean keys of an unknown invocation and the field-name hints of a row.
package editdist

// Bounded returns the optimal-string-alignment distance of a and b
// (insertions, deletions, substitutions and adjacent transpositions, each costing 1),
// or k+1 as soon as it is known to exceed k. Only the diagonal band of width 2k+1 is
// computed, and the scan stops at the first row whose minimum exceeds k.
func Bounded(a, b string, k int) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > k {
		return k + 1
	}
	if len(a) == 0 {
		return len(b)
	}
	inf := k + 1
	var buf [3][96]int
	var pp, prev, cur []int // rows i-2, i-1, i
	if n := len(b) + 1; n <= len(buf[0]) {
		pp, prev, cur = buf[0][:n], buf[1][:n], buf[2][:n]
	} else {
		pp, prev, cur = make([]int, n), make([]int, n), make([]int, n)
	}
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		if lo == 1 {
			cur[0] = min(i, inf)
		} else {
			cur[lo-1] = inf
		}
		rowMin := inf
		ai := a[i-1]
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if ai != b[j-1] {
				v++
			}
			if w := prev[j] + 1; w < v {
				v = w
			}
			if w := cur[j-1] + 1; w < v {
				v = w
			}
			if i > 1 && j > 1 && ai == b[j-2] && a[i-2] == b[j-1] {
				if w := pp[j-2] + 1; w < v {
					v = w
				}
			}
			v = min(v, inf)
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		if rowMin > k {
			return inf
		}
		pp, prev, cur = prev, cur, pp
	}
	return min(prev[len(b)], inf)
}
