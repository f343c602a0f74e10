package eventlog_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The log stores events whatever their data: it does not know the contract, so a
// change to the contract's checks does not reach it, nor does it reach the
// contract's schema compiler. Of the packages above it, it depends on api/answer
// alone: the shapes of a receipt that the bus and the HTTP API both carry, of the
// standard library only.
func TestEventlogKnowsNoContract(t *testing.T) {
	const pkg = "github.com/capdir/capdir/eventlog"
	deptest.Forbid(t, pkg,
		"github.com/capdir/capdir/contract", "github.com/santhosh-tekuri/jsonschema",
		"github.com/capdir/capdir/projector", "github.com/capdir/capdir/dispatcher")
	for _, d := range deptest.Deps(t, pkg) {
		if strings.HasPrefix(d, "github.com/capdir/capdir/api") && d != "github.com/capdir/capdir/api/answer" {
			t.Errorf("%s depends on %s", pkg, d)
		}
	}
}
