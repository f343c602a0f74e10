package command

import (
	"testing"

	"github.com/capdir/capdir/api/answer"
)

// Past the listed bound, a failure found late (an append refused when it was
// acknowledged, up to importWindow rows after it was read) takes the place of a
// listed one of a higher index: the answer lists the failures of the lowest
// indexes, whatever order they were found in, and counts the others.
func TestImportListsTheFailuresOfTheLowestIndexes(t *testing.T) {
	var im importer
	const n = answer.MaxListedFailures
	// Rows 100.. fail as they are read, past the bound; then rows 0..99, read
	// earlier, fail as their appends are acknowledged.
	for i := 100; i < n+150; i++ {
		im.failMsg(importRow{index: i, line: i + 1}, "", "read", "")
	}
	for i := range 100 {
		im.failMsg(importRow{index: i, line: i + 1}, "", "acknowledged", "")
	}
	res := importResult(&im)
	if len(res.Failed) != n || res.FailedUnlisted != 150 {
		t.Fatalf("%d listed, %d unlisted; want %d, 150", len(res.Failed), res.FailedUnlisted, n)
	}
	for i, f := range res.Failed {
		if f.Index != i || f.Line != i+1 {
			t.Fatalf("listed[%d] is row %d (line %d); want row %d", i, f.Index, f.Line, i)
		}
	}
	if res.Failed[0].Error != "acknowledged" || res.Failed[n-1].Error != "read" {
		t.Fatalf("first %q, last %q", res.Failed[0].Error, res.Failed[n-1].Error)
	}
}
