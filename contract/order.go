package contract

import (
	"cmp"
	"slices"
)

// Compare orders rows canonically and returns -1, 0 or +1. The canonical order,
// which row_num numbers:
//
//  1. rows with a non-null seq come first, in ascending seq;
//  2. then rows with a null seq;
//  3. within equal seq (or both null), rows sort by key in ascending byte order.
//
// Keys are unique, so the order is total over a directory.
func Compare(a, b *Row) int {
	switch {
	case a.Seq != nil && b.Seq == nil:
		return -1
	case a.Seq == nil && b.Seq != nil:
		return 1
	case a.Seq != nil && b.Seq != nil && *a.Seq != *b.Seq:
		return cmp.Compare(*a.Seq, *b.Seq)
	}
	return cmp.Compare(a.Key, b.Key)
}

// Less reports whether a comes before b in the canonical order (see Compare).
func Less(a, b *Row) bool {
	return Compare(a, b) < 0
}

// Number sorts rows into the canonical order in place and sets each RowNum to its
// 1-based position.
func Number(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int { return Compare(&a, &b) })
	for i := range rows {
		rows[i].RowNum = i + 1
	}
}
