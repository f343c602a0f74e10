package ask

import (
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Limits of a query.
const (
	// DefaultLimit is how many results a query returns when its Limit is 0.
	DefaultLimit = 10
	// MaxLimit is the most results a query returns; a larger Limit is lowered to it.
	MaxLimit = 50
	// MaxAskBytes is the longest ask accepted.
	MaxAskBytes = 512
	// MaxAskTerms is the most distinct words an ask may search for (after stop
	// words are dropped and inflections folded).
	MaxAskTerms = 20
)

// BM25 parameters: k1 saturates a term's weight within a row, b is how much a
// longer field dilutes it.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Query is one search.
type Query struct {
	// Text is the need in plain words.
	Text string
	// Limit is how many results to return: 0 for DefaultLimit, at most MaxLimit.
	Limit int
	// Visible says which rows the caller may see, by key and category; nil means
	// every row (the owner). It is called once per indexed row, under the index's
	// read lock: it must be fast and must not call the index. Only visible rows are
	// ranked, counted in Total, and enter the statistics (row count, term
	// frequencies across rows, field lengths) that scores are made of, so neither a
	// result nor its score says anything about a row the caller cannot see.
	Visible func(key, category string) bool
}

// Answer is the ranked rows for a query, best first.
type Answer struct {
	Ask     string   `json:"ask"`
	Results []Result `json:"results"`
	// Total is how many visible rows matched at least one word.
	Total int `json:"total"`
}

// Result is one row that matched.
type Result struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Category string `json:"category"`
	// What is the row's description (contract.Row.Description), cut to 256 bytes.
	What string `json:"what"`
	// Score is the row's BM25F score, rounded to four decimals.
	Score float64 `json:"score"`
	// Why lists, per field that matched and in field order, the ask's words it
	// holds: "what: temperature, coordinate".
	Why []string `json:"why"`
}

// term is one word of an ask: as written (lower-cased) and its stem.
type term struct{ word, stem string }

// parseAsk splits text into its distinct search terms, or says what to fix.
func parseAsk(text string) ([]term, error) {
	if len(text) > MaxAskBytes {
		return nil, errTooLong(len(text))
	}
	if strings.TrimSpace(text) == "" {
		return nil, errEmpty()
	}
	var terms []term
	var tk tokenizer
	tk.each(text, func(word, stem []byte) {
		for _, t := range terms {
			if t.stem == string(stem) {
				return
			}
		}
		terms = append(terms, term{word: string(word), stem: string(stem)})
	})
	switch {
	case len(terms) == 0:
		return nil, errNoWords(text)
	case len(terms) > MaxAskTerms:
		return nil, errTooManyWords(len(terms))
	}
	return terms, nil
}

// Search ranks the rows q.Visible lets the caller see for q.Text.
//
// Ranking is BM25F: each word's frequency in each field of a row is weighted by the
// field's boost (key 3, WHAT 2.5, WHEN_TO_USE 2, category 1.5, ARGS and OUTPUT 1,
// summary 0.75) and divided by the field's length relative to its average
// (b = 0.75); the sum is saturated (k1 = 1.2) and multiplied by the word's inverse
// document frequency, and the words' scores are added; the sum is multiplied by
// the share of the ask's words the row holds. Ties (scores equal to six decimals)
// go to the lower planner_rank, then to the key in byte order.
func (x *Index) Search(q Query) (Answer, error) {
	terms, err := parseAsk(q.Text)
	if err != nil {
		return Answer{}, err
	}
	limit := q.Limit
	switch {
	case limit < 0:
		return Answer{}, errBadLimit(limit)
	case limit == 0:
		limit = DefaultLimit
	case limit > MaxLimit:
		limit = MaxLimit
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.getScratch()
	defer x.scratch.Put(sc)

	out := Answer{Ask: q.Text, Results: []Result{}}
	n := x.statsLocked(q.Visible, sc)
	if n == 0 {
		return out, nil
	}
	for i, t := range terms {
		x.scoreTermLocked(t.stem, i, n, sc)
	}
	out.Total = len(sc.touched)
	top := sc.top(x, limit, len(terms))
	for _, c := range top {
		d := &x.docs[c.doc]
		out.Results = append(out.Results, Result{
			Key: d.key, Type: d.typ, Category: d.category, What: d.what,
			Score: math.Round(c.score*1e4) / 1e4, Why: x.whyLocked(c.doc, terms),
		})
	}
	return out, nil
}

// statsLocked counts the visible rows and fills sc.norm from their average field
// lengths; with a filter it marks the visible rows in sc.vis.
func (x *Index) statsLocked(visible func(key, category string) bool, sc *scratch) int {
	n, sums := x.live, x.lenSum
	sc.filtered = visible != nil
	if sc.filtered {
		n, sums = 0, [numFields]uint64{}
		words := (len(x.docs) + 63) / 64
		sc.vis = slices.Grow(sc.vis[:0], words)[:words]
		clear(sc.vis)
		for id := range x.docs {
			st := &x.stats[id]
			if st.live && visible(x.docs[id].key, x.docs[id].category) {
				sc.vis[id/64] |= 1 << (id % 64)
				n++
				for f := range numFields {
					sums[f] += uint64(st.lens[f])
				}
			}
		}
	}
	for f := range numFields {
		sc.bOverAvg[f] = 0
		if sums[f] > 0 {
			sc.bOverAvg[f] = bm25B * float64(n) / float64(sums[f])
		}
		for l := range normTable {
			sc.norm[f][l] = fieldWeights[f] / (1 - bm25B + float64(l)*sc.bOverAvg[f])
		}
	}
	return n
}

// scoreTermLocked adds the ti-th term's score to every visible row holding it.
func (x *Index) scoreTermLocked(stem string, ti, n int, sc *scratch) {
	pl := x.terms[stem]
	if pl == nil {
		return
	}
	hits := sc.hits[:0]
	for _, p := range pl.ps {
		st := &x.stats[p.doc]
		if sc.filtered {
			if sc.vis[p.doc/64]&(1<<(p.doc%64)) == 0 {
				continue
			}
		} else if !st.live {
			continue
		}
		var w float64
		for tf := p.tf; tf != 0; {
			f := field(bits.TrailingZeros32(tf) / 4)
			c := float64(tfOf(tf, f))
			tf &^= 15 << (4 * f)
			if l := st.lens[f]; l < normTable {
				w += c * sc.norm[f][l]
			} else {
				w += c * fieldWeights[f] / (1 - bm25B + float64(l)*sc.bOverAvg[f])
			}
		}
		hits = append(hits, hit{doc: p.doc, s: w / (bm25K1 + w)})
	}
	sc.hits = hits
	if len(hits) == 0 {
		return
	}
	df := float64(len(hits))
	idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	for _, h := range hits {
		if sc.acc[h.doc] == 0 {
			sc.touched = append(sc.touched, h.doc)
		}
		sc.acc[h.doc] += idf * h.s
		sc.matched[h.doc] |= 1 << ti
	}
}

// whyLocked lists, per field in field order, the ask's words the document holds.
func (x *Index) whyLocked(id uint32, terms []term) []string {
	var words [numFields][]string
	for _, t := range terms {
		pl := x.terms[t.stem]
		if pl == nil {
			continue
		}
		i, ok := slices.BinarySearchFunc(pl.ps, id, func(p posting, id uint32) int { return int(p.doc) - int(id) })
		if !ok {
			continue
		}
		for f := range numFields {
			if tfOf(pl.ps[i].tf, f) > 0 {
				words[f] = append(words[f], t.word)
			}
		}
	}
	why := []string{}
	for f := range numFields {
		if len(words[f]) > 0 {
			why = append(why, fieldNames[f]+": "+strings.Join(words[f], ", "))
		}
	}
	return why
}
