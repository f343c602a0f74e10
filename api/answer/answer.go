// Package answer holds the JSON answers of capdir's HTTP API that the server (api)
// writes and the Go client (api/client) reads, declared once for both: a row and
// its history of changes, a receipt and its public view, an import's report, an
// approval. It depends on the standard library only, so a program that talks to
// capdir over HTTP stays light. The packages that own these values name the same
// types: contract.Row and contract.Change, importer.Report are aliases of the
// types here. A receipt and its public view are declared in package receipt,
// which the log's wire types name too; Receipt and PublicReceipt here are
// aliases of those.
package answer

import "time"

// Approval is a token holder's call to a sensitive row that the watcher held for
// the owner's decision, as the owner sees it, the call's body included: the log is
// the owner's (GET /api/approvals, GET /api/approvals/{id}).
type Approval struct {
	InvocationID    string     `json:"invocation_id"`
	Key             string     `json:"key"`
	Trace           string     `json:"trace"`
	Actor           string     `json:"actor"`
	State           string     `json:"state"` // pending, approved, denied, expired
	Body            *string    `json:"body"`
	BodyError       string     `json:"body_error,omitempty"` // why Body is nil
	BodyFingerprint string     `json:"body_fingerprint"`
	RequestedAt     time.Time  `json:"requested_at"`
	ExpiresAt       time.Time  `json:"expires_at"`
	DecidedBy       string     `json:"decided_by,omitempty"`
	DecidedAt       *time.Time `json:"decided_at,omitempty"`
	Decide          string     `json:"decide,omitempty"` // where to POST the decision while pending
	Receipt         string     `json:"receipt"`
}
