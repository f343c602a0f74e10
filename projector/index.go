package projector

import (
	"slices"
	"sync"

	"github.com/capdir/capdir/contract"
)

// orderIndex keeps every live key in the canonical order (contract.Compare) so that
// row_num is a binary search. Only Key and Seq of each row are kept.
type orderIndex struct {
	mu   sync.RWMutex
	rows []contract.Row // sorted; Key and Seq only
	seq  map[string]*int64
}

func newOrderIndex() *orderIndex { return &orderIndex{seq: map[string]*int64{}} }

func (x *orderIndex) find(r *contract.Row) (int, bool) {
	return slices.BinarySearchFunc(x.rows, r, func(a contract.Row, b *contract.Row) int { return contract.Compare(&a, b) })
}

// put inserts or moves key to its place for seq.
func (x *orderIndex) put(key string, seq *int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(key)
	r := contract.Row{Key: key, Seq: seq}
	i, _ := x.find(&r)
	x.rows = slices.Insert(x.rows, i, r)
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
	if i, found := x.find(&contract.Row{Key: key, Seq: old}); found {
		x.rows = slices.Delete(x.rows, i, i+1)
	}
	delete(x.seq, key)
}

// rank is the 1-based position of key, 0 when absent.
func (x *orderIndex) rank(key string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	seq, ok := x.seq[key]
	if !ok {
		return 0
	}
	i, found := x.find(&contract.Row{Key: key, Seq: seq})
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
		out[i] = x.rows[i].Key
	}
	return out
}

func (x *orderIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.rows)
}

// load replaces the index with sorted rows (used on open).
func (x *orderIndex) load(rows []contract.Row) {
	slices.SortFunc(rows, func(a, b contract.Row) int { return contract.Compare(&a, &b) })
	seq := make(map[string]*int64, len(rows))
	for _, r := range rows {
		seq[r.Key] = r.Seq
	}
	x.mu.Lock()
	x.rows, x.seq = rows, seq
	x.mu.Unlock()
}
