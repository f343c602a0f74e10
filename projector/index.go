package projector

import (
	"slices"
	"sync"

	"github.com/capdir/capdir/contract"
)

// orderIndex keeps every live key in the canonical order (contract.Compare) so that
// row_num is a binary search. Only the key and seq of each row are kept.
type orderIndex struct {
	mu   sync.RWMutex
	rows []indexEntry // sorted
	seq  map[string]*int64
}

// indexEntry is the part of a row its place in the order depends on.
type indexEntry struct {
	key string
	seq *int64
}

func compareEntries(a, b indexEntry) int {
	return contract.Compare(&contract.Row{Key: a.key, Seq: a.seq}, &contract.Row{Key: b.key, Seq: b.seq})
}

// mergeThreshold is the batch size from which apply rebuilds the order in one
// merge instead of inserting key by key (each insertion moves half the slice).
const mergeThreshold = 16

func newOrderIndex() *orderIndex { return &orderIndex{seq: map[string]*int64{}} }

func (x *orderIndex) find(e indexEntry) (int, bool) {
	return slices.BinarySearchFunc(x.rows, e, compareEntries)
}

// put inserts or moves key to its place for seq.
func (x *orderIndex) put(key string, seq *int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.putLocked(key, seq)
}

func (x *orderIndex) putLocked(key string, seq *int64) {
	x.removeLocked(key)
	e := indexEntry{key: key, seq: seq}
	i, _ := x.find(e)
	x.rows = slices.Insert(x.rows, i, e)
	x.seq[key] = seq
}

func (x *orderIndex) remove(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(key)
}

func (x *orderIndex) removeLocked(key string) {
	old, ok := x.seq[key]
	if !ok {
		return
	}
	if i, found := x.find(indexEntry{key: key, seq: old}); found {
		x.rows = slices.Delete(x.rows, i, i+1)
	}
	delete(x.seq, key)
}

// apply applies a committed batch's directory changes in order. A large batch (an
// import) is merged in one pass, so that importing n rows costs O(n log n) and not
// O(n²).
func (x *orderIndex) apply(changes []dirChange) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(changes) < mergeThreshold {
		for _, c := range changes {
			if c.deleted {
				x.removeLocked(c.key)
			} else {
				x.putLocked(c.key, c.seq)
			}
		}
		return
	}
	final := make(map[string]dirChange, len(changes)) // the last change of each key wins
	for _, c := range changes {
		final[c.key] = c
	}
	added := make([]indexEntry, 0, len(final))
	for k, c := range final {
		if c.deleted {
			delete(x.seq, k)
			continue
		}
		added = append(added, indexEntry{key: k, seq: c.seq})
		x.seq[k] = c.seq
	}
	slices.SortFunc(added, compareEntries)
	merged := make([]indexEntry, 0, len(x.rows)+len(added))
	i := 0
	for _, e := range x.rows {
		if _, changed := final[e.key]; changed {
			continue
		}
		for i < len(added) && compareEntries(added[i], e) < 0 {
			merged = append(merged, added[i])
			i++
		}
		merged = append(merged, e)
	}
	x.rows = append(merged, added[i:]...)
}

// rank is the 1-based position of key, 0 when absent.
func (x *orderIndex) rank(key string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	seq, ok := x.seq[key]
	if !ok {
		return 0
	}
	i, found := x.find(indexEntry{key: key, seq: seq})
	if !found {
		return 0
	}
	return i + 1
}

// keys returns the keys in canonical order.
func (x *orderIndex) keys() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, len(x.rows))
	for i := range x.rows {
		out[i] = x.rows[i].key
	}
	return out
}

func (x *orderIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.rows)
}

// load replaces the index with rows (Key and Seq are used; used on open).
func (x *orderIndex) load(rows []contract.Row) {
	entries := make([]indexEntry, len(rows))
	seq := make(map[string]*int64, len(rows))
	for i, r := range rows {
		entries[i] = indexEntry{key: r.Key, seq: r.Seq}
		seq[r.Key] = r.Seq
	}
	slices.SortFunc(entries, compareEntries)
	x.mu.Lock()
	x.rows, x.seq = entries, seq
	x.mu.Unlock()
}
