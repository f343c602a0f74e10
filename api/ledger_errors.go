package api

import (
	"fmt"

	"github.com/capdir/capdir/projector"
)

// The ledger routes' refusals, each a literal saying what to fix.

var errNoLedger = newError(ErrUnavailable, "this node keeps no ledger: it was started without a ledger key")

const consistencyUsage = "GET /api/ledger/consistency needs ?from=SIZE&to=SIZE: two tree sizes (of two checkpoints), from at least 1 and at most to"

func badTreeSize(name, got string) string {
	return fmt.Sprintf("%s must be a tree size: a whole number from 1, in decimal without leading zeros; got %q", name, got)
}

func fromAfterTo(from, to int64) string {
	return fmt.Sprintf("from (%d) must not be larger than to (%d): a tree is proved to extend an older, smaller one", from, to)
}

func beyondLedger(e *projector.LedgerSizeError) string {
	return fmt.Sprintf("tree size %d is beyond the ledger: it holds %d receipts", e.Asked, e.Size)
}
