package contract

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// StripDocs gives what keeping the payload's lines and joining them gives
// (stripDocsApart), over random contents of comments, payload, blank lines
// and spacing; a payload after its comments comes back without a copy.
func TestStripDocsAsKeepingTheLinesGives(t *testing.T) {
	parts := []string{"# WHAT: echo", "  # indented", "#", "\t#x", "[\"$1\"]", "GET /x", " a b ", "", " ", "\r", "x\r", "#\r", "$1+"}
	rng := uint64(7)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for range 50000 {
		var lines []string
		for range next(7) {
			lines = append(lines, parts[next(len(parts))])
		}
		content := strings.Join(lines, "\n")
		if next(4) == 0 {
			content += "\n"
		}
		if got, want := StripDocs(content), stripDocsApart(content); got != want {
			t.Fatalf("%q: StripDocs %q, keeping the lines gives %q", content, got, want)
		}
	}
	content := "# WHAT: echo the first argument\n# RETURNS: it\n[\"$1\"]"
	if n := allocstest.PerRun(t, 100, func() { StripDocs(content) }); n != 0 {
		t.Errorf("StripDocs of comments then a payload allocates %v times", n)
	}
}
