package ask

import (
	"math"
	"math/bits"
	"slices"
	"strings"
)

// scratch is one search's working memory, pooled: a score per document id (zero
// when untouched) and the ids touched, so resetting costs what the search touched.
type scratch struct {
	acc      []float64
	matched  []uint32 // the ask's terms each document holds, a bit each
	touched  []uint32
	hits     []hit
	filtered bool
	vis      []uint64 // visible document ids, a bit each, when filtered
	best     []candidate
	// norm[f][l] is field f's boost over its length normalisation for a field of
	// l terms (BM25's 1 - b + b·l/avg), for this search's statistics; bOverAvg[f]
	// is b over field f's average length, for longer fields.
	norm     [numFields][normTable]float64
	bOverAvg [numFields]float64
}

// normTable is how many field lengths sc.norm holds.
const normTable = 64

// hit is one document's share of one term, before the term's idf.
type hit struct {
	doc uint32
	s   float64
}

// candidate is a document in the running top list.
type candidate struct {
	doc   uint32
	score float64
	q     int64 // score to six decimals: the part ties compare
}

// getScratch returns a scratch with an accumulator for every document id; the
// caller holds the read lock and puts it back after top.
func (x *Index) getScratch() *scratch {
	sc, _ := x.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if len(sc.acc) < len(x.docs) {
		sc.acc = make([]float64, len(x.docs)+len(x.docs)/4)
		sc.matched = make([]uint32, len(sc.acc))
	}
	return sc
}

// top returns the limit best touched documents, best first, and leaves the
// accumulator zeroed. A document's score is its terms' scores added, times the
// share of the ask's nterms terms it holds (coordination): a row that matches
// every word of an ask beats one that matches one word strongly.
func (sc *scratch) top(x *Index, limit, nterms int) []candidate {
	best := sc.best[:0]
	for _, id := range sc.touched {
		score := sc.acc[id] * float64(bits.OnesCount32(sc.matched[id])) / float64(nterms)
		c := candidate{doc: id, score: score, q: int64(math.Round(score * 1e6))}
		sc.acc[id], sc.matched[id] = 0, 0
		if len(best) == limit && !x.better(c, best[len(best)-1]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, c, func(b, c candidate) int {
			if x.better(b, c) {
				return -1
			}
			return 1
		})
		if len(best) < limit {
			best = append(best, candidate{})
		}
		copy(best[i+1:], best[i:len(best)-1])
		best[i] = c
	}
	sc.touched = sc.touched[:0]
	sc.best = best
	return best
}

// better orders candidates: higher score, then lower planner_rank, then key.
func (x *Index) better(a, b candidate) bool {
	if a.q != b.q {
		return a.q > b.q
	}
	da, db := &x.docs[a.doc], &x.docs[b.doc]
	if da.rank != db.rank {
		return da.rank < db.rank
	}
	return strings.Compare(da.key, db.key) < 0
}
