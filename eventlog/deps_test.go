package eventlog_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The log stores events whatever their data: it does not know the contract, so a
// change to the contract's checks does not reach it, nor does it reach the
// contract's schema compiler. Nor does it know the HTTP API: the shapes of a
// receipt, which the bus and the HTTP API both carry, are package receipt's, of
// the standard library only, and api/answer names them as eventlog/wire does.
func TestEventlogKnowsNoContract(t *testing.T) {
	deptest.Forbid(t, "github.com/capdir/capdir/eventlog",
		"github.com/capdir/capdir/contract", "github.com/santhosh-tekuri/jsonschema",
		"github.com/capdir/capdir/projector", "github.com/capdir/capdir/dispatcher",
		"github.com/capdir/capdir/api")
}
