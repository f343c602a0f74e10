package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// The answers of the watcher's routes and of a held dispatch, in one place.

// Approval states as the routes name them.
const (
	approvalPending  = "pending"
	approvalApproved = "approved"
	approvalDenied   = "denied"
	approvalExpired  = "expired"
)

// approvalState names a's state at now.
func approvalState(a *projector.Approval, now time.Time) string {
	switch {
	case a.ExpiredAt(now):
		return approvalExpired
	case a.Decision == wire.DecisionApprove:
		return approvalApproved
	case a.Decision == wire.DecisionDeny:
		return approvalDenied
	}
	return approvalPending
}

func approvalPath(inv string) string { return "/api/approvals/" + inv }

// pendingApprovalAnswer is a dispatch's 202 when the watcher held the call for the
// owner's approval: nothing ran, and the receipt comes once the owner decides or
// the approval expires.
func pendingApprovalAnswer(rc *wire.Receipt) map[string]any {
	return map[string]any{
		"pending": true, "ran": false, "status": wire.StatusPendingApproval, "trace": rc.Trace,
		"invocation_id": rc.InvocationID, "approval": approvalPath(rc.InvocationID),
		"receipt": "/receipt/" + rc.InvocationID,
		"how_to_fix": "nothing to fix: the row is sensitive, so the call waits for the owner's approval; it runs once approved, " +
			"and its receipt (at \"receipt\") tells the outcome",
	}
}

// decisionShapeHint is the 400 of a decision that is not one.
const decisionShapeHint = `send {"decision":"approve"} or {"decision":"deny"}`

// decisionAnswer is POST /api/approvals/{id}'s answer: the receipt's status once
// there is one (the denial's, or the approved call's), else pending.
func decisionAnswer(decision, inv string, rc *wire.Receipt) map[string]any {
	m := map[string]any{"ok": true, "decision": decision, "invocation_id": inv, "receipt": "/api/receipts/" + inv}
	if rc == nil {
		m["pending"] = true
		return m
	}
	m["status"], m["ran"] = rc.Status, rc.Ran
	return m
}

// writeApprovalError answers a failed approval lookup or decision.
func writeApprovalError(w http.ResponseWriter, inv string, err error) {
	status, code := http.StatusServiceUnavailable, "approval_unavailable"
	switch {
	case errors.Is(err, dispatcher.ErrBadDecision):
		status, code = http.StatusBadRequest, "bad_decision"
	case errors.Is(err, dispatcher.ErrApprovalUnknown):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, dispatcher.ErrApprovalDecided):
		status, code = http.StatusConflict, "approval_decided"
	case errors.Is(err, dispatcher.ErrApprovalExpired):
		status, code = http.StatusGone, "approval_expired"
	case errors.Is(err, dispatcher.ErrApprovalRequestGone):
		status, code = http.StatusGone, "approval_request_gone"
	}
	writeJSON(w, status, map[string]any{"error": code, "invocation_id": inv, "detail": err.Error()})
}
