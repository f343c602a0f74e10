package eventlog_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The log stores events whatever their data: it does not know rows, so a change to
// the contract does not reach it, nor does it reach the contract's schema compiler.
func TestEventlogKnowsNoContract(t *testing.T) {
	deptest.Forbid(t, "github.com/capdir/capdir/eventlog",
		"github.com/capdir/capdir/contract", "github.com/santhosh-tekuri/jsonschema",
		"github.com/capdir/capdir/projector", "github.com/capdir/capdir/dispatcher", "github.com/capdir/capdir/api")
}
