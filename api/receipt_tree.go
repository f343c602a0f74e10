package api

import (
	"github.com/capdir/capdir/eventlog/wire"
)

// The receipt tree: GET /api/receipts/{id} answers a call's receipt with the
// receipts of its steps nested under it (a flow's steps, an agent's tool calls),
// and theirs under them, bounded.
const (
	// treeMaxDepth bounds how many levels of steps are nested.
	treeMaxDepth = 16
	// treeMaxNodes bounds how many step receipts one answer nests.
	treeMaxNodes = 512
)

// ReceiptTree is a receipt with its children's receipts. Steps is in the order of
// the receipt's children, each a *ReceiptTree, or a *PendingStep for a child whose
// receipt is not in the projection (still running, or cut short by a stop).
// StepsTruncated is set when the bounds left some children out.
type ReceiptTree struct {
	wire.Receipt
	Steps          []any `json:"steps,omitempty"`
	StepsTruncated bool  `json:"steps_truncated,omitempty"`
}

// PendingStep stands in the tree for a step without a receipt.
type PendingStep struct {
	InvocationID string `json:"invocation_id"`
	Pending      bool   `json:"pending"`
}

// receiptTree nests the receipts of rc's children, depth first, within the bounds.
func (s *Server) receiptTree(rc wire.Receipt) *ReceiptTree {
	budget := treeMaxNodes
	return s.subtree(rc, 0, &budget)
}

func (s *Server) subtree(rc wire.Receipt, depth int, budget *int) *ReceiptTree {
	t := &ReceiptTree{Receipt: rc}
	for _, id := range rc.Children {
		if depth == treeMaxDepth || *budget == 0 {
			t.StepsTruncated = true
			break
		}
		*budget--
		child, _, err := s.cfg.Projector.Receipt(id)
		if err != nil {
			t.Steps = append(t.Steps, &PendingStep{InvocationID: id, Pending: true})
			continue
		}
		t.Steps = append(t.Steps, s.subtree(child, depth+1, budget))
	}
	return t
}
