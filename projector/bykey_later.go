package projector

import (
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// A rebuild writes the receipts' by-key index (bucketByKey: row key, sequence,
// part → ledger leaf) after the receipts, not with each batch. The index is
// ordered by row key, and a log's receipts come for many rows at once: put with
// each batch, its entries land all over the bucket, so every batch's commit
// rewrites a page of the bucket for nearly every receipt it folds, and the
// bucket's pages are rewritten again and again as the rebuild goes on. Held back
// and put in the index's order, each page is written once. A rebuild's file is
// swapped in only once complete (Rebuild), so nobody reads the index meanwhile,
// and the file a rebuild leaves holds what folding the log batch by batch does
// (TestRebuildStoresWhatTheLiveFoldStores).

// byKeyLater holds the by-key entries of the receipts folded so far, per row
// key, in the order they were folded (their sequences ascending).
type byKeyLater struct {
	rows  map[string]int // row key → its index in runs
	runs  []byKeyRun
	count int // entries held
	// limit is how many entries are held before they are put (put, from the
	// batch that reaches it): what a rebuild holds in memory is bounded.
	limit int
}

type byKeyRun struct {
	key     string
	entries []byKeyEntry
}

type byKeyEntry struct {
	seq  uint64
	part uint16
	leaf int64
}

// byKeyLaterLimit is byKeyLater.limit's default: 6 MB of entries held (24
// bytes each), up to twice that with the room their slices keep.
const byKeyLaterLimit = 1 << 18

func newByKeyLater(limit int) *byKeyLater {
	if limit <= 0 {
		limit = byKeyLaterLimit
	}
	return &byKeyLater{rows: make(map[string]int), limit: limit}
}

// add holds the entry of the receipt of row key at seq and part, folded as leaf.
func (b *byKeyLater) add(key string, seq uint64, part int, leaf int64) {
	i, ok := b.rows[key]
	if !ok {
		// The key may share the memory of the event it was read from: held
		// on its own, it does not keep the event's data.
		key = strings.Clone(key)
		i = len(b.runs)
		b.rows[key] = i
		b.runs = append(b.runs, byKeyRun{key: key})
	}
	b.runs[i].entries = append(b.runs[i].entries, byKeyEntry{seq: seq, part: uint16(part), leaf: leaf})
	b.count++
}

// full reports whether b holds its limit.
func (b *byKeyLater) full() bool { return b.count >= b.limit }

// put puts every entry held, in the index's order, in tx, and empties b.
func (b *byKeyLater) put(tx *bolt.Tx, lb *ledgerBatch) error {
	if b.count == 0 {
		return nil
	}
	slices.SortFunc(b.runs, func(x, y byKeyRun) int { return strings.Compare(x.key, y.key) })
	for _, r := range b.runs {
		for _, e := range r.entries {
			if err := lb.putLeafValue(bucketByKey, lb.byKeyKey(r.key, e.seq, int(e.part)), e.leaf); err != nil {
				return err
			}
		}
	}
	clear(b.rows)
	clear(b.runs)
	b.runs, b.count = b.runs[:0], 0
	return nil
}
