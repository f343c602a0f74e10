package ask

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/capdir/capdir/contract"
)

// Limits on what one row adds to the index.
const (
	// MaxRowTerms is how many distinct terms of one row are indexed, taken in field
	// order (key, WHAT, WHEN_TO_USE, category, ARGS, OUTPUT, summary).
	MaxRowTerms = 1024
	// maxWhatBytes bounds the description kept for a result.
	maxWhatBytes = 256
	// compactMin is the fewest dead documents that trigger a compaction.
	compactMin = 1024
)

// Index is an inverted index over the enabled rows of a directory. It is safe for
// concurrent use: searches share a read lock, changes take the write lock. Keep it
// current with Apply (the signature of projector.Projector.WatchRows), or Put and
// Delete.
type Index struct {
	mu    sync.RWMutex
	docs  []doc             // by document id; dead ones until compact
	stats []docStat         // by document id, apart: what scoring reads per posting
	byKey map[string]uint32 // live key -> document id
	terms map[string]*postings
	// live counts the live documents and lenSum their field lengths, the corpus
	// statistics of an unfiltered search.
	live   int
	dead   int
	lenSum [numFields]uint64
	// intern shares the type and category strings between documents.
	intern map[string]string

	// Scratch of Put, under mu.
	tok     tokenizer
	rowTerm map[*postings]uint32 // term -> packed term frequencies of the row

	scratch sync.Pool // *scratch of Search
}

// doc is one indexed row, with what a result shows. A document whose row was
// replaced or deleted stays, dead and emptied, until compact drops it from the
// posting lists.
type doc struct {
	key, typ, category, what string
	rank                     int32 // planner_rank: lower wins a tie
}

// docStat is what scoring reads of a document for each of its postings, 16 bytes.
type docStat struct {
	lens [numFields]uint16 // terms per field, saturating
	live bool
}

// postings lists, for one term, the documents holding it in increasing id order,
// with the term's frequency in each field.
type postings struct {
	ps []posting
}

// posting is one document holding a term: tf packs the term's frequency in each
// field in four bits (field f at bits 4f..4f+3), saturating at 15.
type posting struct {
	doc uint32
	tf  uint32
}

func tfOf(tf uint32, f field) uint32 { return tf >> (4 * f) & 15 }

// New returns an empty index.
func New() *Index {
	return &Index{
		byKey:   map[string]uint32{},
		terms:   map[string]*postings{},
		intern:  map[string]string{},
		rowTerm: map[*postings]uint32{},
	}
}

// Apply indexes row under key, or removes key when row is nil or disabled: the
// watcher projector.Projector.WatchRows expects. It keeps nothing of row but
// copies.
func (x *Index) Apply(key string, row *contract.Row) {
	if row == nil || row.Enabled == 0 {
		x.Delete(key)
		return
	}
	x.Put(row)
}

// Put indexes r, replacing the row of the same key. A disabled row is removed
// instead: it never appears in a search.
func (x *Index) Put(r *contract.Row) {
	if r.Enabled == 0 {
		x.Delete(r.Key)
		return
	}
	fields, desc := rowFields(r)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(r.Key)
	id := uint32(len(x.docs))
	d := doc{
		key: strings.Clone(r.Key), typ: x.internLocked(r.Type), category: x.internLocked(r.Category),
		what: cut(desc, maxWhatBytes), rank: int32(r.PlannerRank),
	}
	st := docStat{live: true}
	clear(x.rowTerm)
	for f := range numFields {
		var n int
		x.tok.each(fields[f], func(_, stem []byte) {
			n++
			pl := x.terms[string(stem)]
			if pl == nil {
				if len(x.rowTerm) >= MaxRowTerms {
					return
				}
				pl = &postings{}
				x.terms[string(stem)] = pl
			} else if _, ok := x.rowTerm[pl]; !ok && len(x.rowTerm) >= MaxRowTerms {
				return
			}
			tf := x.rowTerm[pl]
			if tfOf(tf, field(f)) < 15 {
				tf += 1 << (4 * f)
			}
			x.rowTerm[pl] = tf
		})
		st.lens[f] = uint16(min(n, 1<<16-1))
		x.lenSum[f] += uint64(st.lens[f])
	}
	for pl, tf := range x.rowTerm {
		pl.ps = append(pl.ps, posting{doc: id, tf: tf})
	}
	x.docs = append(x.docs, d)
	x.stats = append(x.stats, st)
	x.byKey[d.key] = id
	x.live++
	x.maybeCompactLocked()
}

// Delete removes the row of key; an absent key does nothing.
func (x *Index) Delete(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(key)
	x.maybeCompactLocked()
}

// maybeCompactLocked compacts once dead documents reach half the live ones (and
// compactMin): the posting lists then hold at most 1.5 times the live postings, and
// each compaction, linear in the postings, is paid for by as many changes as half
// the live rows.
func (x *Index) maybeCompactLocked() {
	if x.dead >= compactMin && x.dead >= x.live/2 {
		x.compactLocked()
	}
}

// deleteLocked marks key's document dead; its postings stay until compact.
func (x *Index) deleteLocked(key string) {
	id, ok := x.byKey[key]
	if !ok {
		return
	}
	delete(x.byKey, key)
	for f := range numFields {
		x.lenSum[f] -= uint64(x.stats[id].lens[f])
	}
	x.docs[id], x.stats[id] = doc{}, docStat{}
	x.live--
	x.dead++
}

// compactLocked drops dead documents: live ones are numbered again densely, in
// the same order, so every posting list stays sorted; terms left without a
// posting are forgotten, and so are types and categories no row uses any more.
func (x *Index) compactLocked() {
	remap := make([]uint32, len(x.docs))
	docs, stats := make([]doc, 0, x.live), make([]docStat, 0, x.live)
	x.intern = map[string]string{}
	for id := range x.docs {
		if x.stats[id].live {
			d := &x.docs[id]
			remap[id] = uint32(len(docs))
			d.typ, d.category = x.internLocked(d.typ), x.internLocked(d.category)
			docs, stats = append(docs, *d), append(stats, x.stats[id])
			x.byKey[d.key] = remap[id]
		}
	}
	for t, pl := range x.terms {
		kept := pl.ps[:0]
		for _, p := range pl.ps {
			if x.stats[p.doc].live {
				kept = append(kept, posting{doc: remap[p.doc], tf: p.tf})
			}
		}
		switch {
		case len(kept) == 0:
			delete(x.terms, t)
		case cap(kept) > 2*len(kept):
			pl.ps = append([]posting(nil), kept...)
		default:
			pl.ps = kept
		}
	}
	x.docs, x.stats = docs, stats
	x.dead = 0
}

// Len reports how many rows are indexed (the enabled ones).
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

func (x *Index) internLocked(s string) string {
	if v, ok := x.intern[s]; ok {
		return v
	}
	s = strings.Clone(s)
	x.intern[s] = s
	return s
}

// cut returns a copy of s of at most n bytes, cut on a character boundary and
// marked with "…" when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…" // a new string: s is not kept
}
