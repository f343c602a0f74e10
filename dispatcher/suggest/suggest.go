// Package suggest ranks directory keys close to a key that was not found: the
// did_you_mean list of an unknown_key refusal.
//
// # Caveats
//
//   - Distances are over bytes after upper-casing; keys are ASCII by convention.
package suggest

import (
	"math/bits"
	"strings"
	"sync"

	"github.com/capdir/capdir/internal/editdist"
)

// Suggester ranks directory keys close to a key that was not found, for the
// did_you_mean list of an unknown_key answer. It is safe for concurrent use; keep it
// current with Add and Remove as the directory changes.
//
// Ranking, case-insensitive: first every key within a small edit distance of the
// attempted key (Levenshtein distance with adjacent transpositions, over bytes after
// upper-casing; the bound is a quarter of the attempted length, at least 1 and at
// most 3), closest first, ties broken by more
// shared "_"-separated words, then by key. Then keys that share at least one word,
// by the share of words in common (Jaccard), then by length difference, then by key.
//
// Keys are indexed by length and by word, so a query looks only at keys of nearby
// length (cut further by a character-set bound) and at keys sharing a word.
type Suggester struct {
	mu    sync.RWMutex
	keys  map[string]*suggestKey // upper-cased key -> entry
	byLen map[int][]*suggestKey
	// lenMask holds the masks of byLen's keys, in the same order: the length
	// scan reads them contiguously and dereferences only the keys that pass.
	lenMask map[int][]uint64
	byWord  map[string][]wordEntry
	// ids number the keys densely, so a query counts shared words in a slice
	// instead of a map; freed ids are reused.
	nextID  int
	freeIDs []int
	counts  sync.Pool // *[]int32, indexed by id, all zero when returned
}

// wordEntry is one key in a word's list, with what counting needs inline.
type wordEntry struct {
	k      *suggestKey
	id     int32
	nwords int32
}

type suggestKey struct {
	key     string // as added
	upper   string
	words   []string // distinct, non-empty
	wordIdx []int    // position in byWord[words[i]]
	mask    uint64   // character-set fingerprint, see charMask
	lenIdx  int      // position in byLen[len(upper)]
	id      int
}

// NewSuggester returns an empty Suggester.
func New() *Suggester {
	return &Suggester{
		keys:    make(map[string]*suggestKey),
		byLen:   make(map[int][]*suggestKey),
		lenMask: make(map[int][]uint64),
		byWord:  make(map[string][]wordEntry),
	}
}

// Add indexes key. Adding a key that differs only in case from an indexed one
// replaces it.
func (s *Suggester) Add(key string) {
	key = strings.TrimSpace(key)
	if key == "" {
		return
	}
	upper := strings.ToUpper(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[upper]; ok {
		k.key = key
		return
	}
	k := &suggestKey{key: key, upper: upper, words: splitWords(upper), mask: charMask(upper)}
	s.keys[upper] = k
	b := s.byLen[len(upper)]
	k.lenIdx = len(b)
	s.byLen[len(upper)] = append(b, k)
	s.lenMask[len(upper)] = append(s.lenMask[len(upper)], k.mask)
	if n := len(s.freeIDs); n > 0 {
		k.id, s.freeIDs = s.freeIDs[n-1], s.freeIDs[:n-1]
	} else {
		k.id = s.nextID
		s.nextID++
	}
	k.wordIdx = make([]int, len(k.words))
	for i, w := range k.words {
		k.wordIdx[i] = len(s.byWord[w])
		s.byWord[w] = append(s.byWord[w], wordEntry{k: k, id: int32(k.id), nwords: int32(len(k.words))})
	}
}

// Remove drops key (any case); removing an absent key does nothing.
func (s *Suggester) Remove(key string) {
	upper := strings.ToUpper(strings.TrimSpace(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[upper]
	if !ok {
		return
	}
	delete(s.keys, upper)
	b, masks := s.byLen[len(upper)], s.lenMask[len(upper)]
	last := b[len(b)-1]
	b[k.lenIdx] = last
	masks[k.lenIdx] = last.mask
	last.lenIdx = k.lenIdx
	b[len(b)-1] = nil
	if b = b[:len(b)-1]; len(b) == 0 {
		delete(s.byLen, len(upper))
		delete(s.lenMask, len(upper))
	} else {
		s.byLen[len(upper)] = b
		s.lenMask[len(upper)] = masks[:len(b)]
	}
	for i, w := range k.words {
		list := s.byWord[w]
		last := list[len(list)-1]
		pos := k.wordIdx[i]
		list[pos] = last
		for j, lw := range last.k.words {
			if lw == w {
				last.k.wordIdx[j] = pos
				break
			}
		}
		list[len(list)-1] = wordEntry{}
		if list = list[:len(list)-1]; len(list) == 0 {
			delete(s.byWord, w)
		} else {
			s.byWord[w] = list
		}
	}
	s.freeIDs = append(s.freeIDs, k.id)
}

// Len reports how many keys are indexed.
func (s *Suggester) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys)
}

// suggestion is one ranked candidate.
type suggestion struct {
	k       *suggestKey
	dist    int     // edit distance, or maxInt when beyond the bound
	shared  int     // words in common
	jaccard float64 // shared / words in either
}

// noDistance marks a candidate found by words only, beyond the edit bound.
const noDistance = int(^uint(0) >> 1)

// Suggest returns up to n keys close to attempted, best first (see Suggester).
func (s *Suggester) Suggest(attempted string, n int) []string {
	q := strings.ToUpper(strings.TrimSpace(attempted))
	if q == "" || n <= 0 {
		return nil
	}
	bound := min(max(len(q)/4, 1), 3)
	qmask := charMask(q)
	qwords := splitWords(q)

	s.mu.RLock()
	defer s.mu.RUnlock()
	top := topN{n: n, qlen: len(q)}

	// Tier 1: within the edit bound, from the length index.
	near := make(map[*suggestKey]struct{})
	for l := max(len(q)-bound, 1); l <= len(q)+bound; l++ {
		keys := s.byLen[l]
		for i, m := range s.lenMask[l] {
			if bits.OnesCount64(qmask^m) > 2*bound {
				continue // each edit changes at most two characters of the set
			}
			k := keys[i]
			d := editdist.Bounded(q, k.upper, bound)
			if d > bound {
				continue
			}
			near[k] = struct{}{}
			shared := sharedWords(qwords, k.words)
			top.offer(suggestion{k: k, dist: d, shared: shared})
		}
	}

	// Tier 2: sharing a word, from the word index.
	if len(qwords) == 1 {
		for _, e := range s.byWord[qwords[0]] {
			if _, ok := near[e.k]; !ok {
				top.offer(suggestion{k: e.k, dist: noDistance, shared: 1, jaccard: 1 / float64(e.nwords)})
			}
		}
	} else if len(qwords) > 1 {
		cp := s.countSlice()
		counts := *cp
		var touched []wordEntry
		for _, w := range qwords {
			for _, e := range s.byWord[w] {
				if counts[e.id] == 0 {
					touched = append(touched, e)
				}
				counts[e.id]++
			}
		}
		for _, e := range touched {
			c := int(counts[e.id])
			counts[e.id] = 0
			if _, ok := near[e.k]; !ok {
				top.offer(suggestion{k: e.k, dist: noDistance, shared: c,
					jaccard: float64(c) / float64(len(qwords)+int(e.nwords)-c)})
			}
		}
		s.counts.Put(cp)
	}
	return top.keys()
}

// countSlice returns a zeroed counter per key id; the caller holds s.mu (read)
// and puts it back zeroed.
func (s *Suggester) countSlice() *[]int32 {
	cp, _ := s.counts.Get().(*[]int32)
	if cp == nil {
		cp = new([]int32)
	}
	if len(*cp) < s.nextID {
		*cp = make([]int32, s.nextID+s.nextID/4)
	}
	return cp
}

// topN keeps the best n suggestions in order, by the ranking documented on
// Suggester.
type topN struct {
	n    int
	qlen int
	best []suggestion
}

func (t *topN) better(a, b suggestion) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	if a.dist == noDistance {
		if a.jaccard != b.jaccard {
			return a.jaccard > b.jaccard
		}
		if a.shared != b.shared {
			return a.shared > b.shared
		}
		if la, lb := absInt(len(a.k.upper)-t.qlen), absInt(len(b.k.upper)-t.qlen); la != lb {
			return la < lb
		}
		return a.k.upper < b.k.upper
	}
	if a.shared != b.shared {
		return a.shared > b.shared
	}
	return a.k.upper < b.k.upper
}

func (t *topN) offer(c suggestion) {
	if len(t.best) == t.n && !t.better(c, t.best[len(t.best)-1]) {
		return
	}
	i := len(t.best)
	for i > 0 && t.better(c, t.best[i-1]) {
		i--
	}
	if len(t.best) < t.n {
		t.best = append(t.best, suggestion{})
	}
	copy(t.best[i+1:], t.best[i:len(t.best)-1])
	t.best[i] = c
}

func (t *topN) keys() []string {
	out := make([]string, len(t.best))
	for i, c := range t.best {
		out[i] = c.k.key
	}
	return out
}

// splitWords returns the distinct non-empty "_"-separated words of an upper-cased key.
func splitWords(upper string) []string {
	parts := strings.Split(upper, "_")
	out := parts[:0]
	for _, p := range parts {
		if p == "" {
			continue
		}
		dup := false
		for _, o := range out {
			if o == p {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

func sharedWords(a, b []string) int {
	n := 0
	for _, x := range a {
		for _, y := range b {
			if x == y {
				n++
				break
			}
		}
	}
	return n
}

// charMask maps each byte to one of 64 bits (letters and digits get their own bit).
func charMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			m |= 1 << (c - 'A')
		case c >= '0' && c <= '9':
			m |= 1 << (26 + c - '0')
		case c == '_':
			m |= 1 << 36
		default:
			m |= 1 << (37 + c%27)
		}
	}
	return m
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
