package receipt_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// A receipt's shapes are the standard library's only: the log's wire types and the
// HTTP answers both name them, so whatever they import, a bus client and an HTTP
// client would carry.
func TestReceiptIsALeaf(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/capdir/capdir/receipt") {
		if first, _, _ := strings.Cut(d, "/"); strings.Contains(first, ".") && d != "github.com/capdir/capdir/receipt" {
			t.Errorf("package receipt depends on %s", d)
		}
	}
}
