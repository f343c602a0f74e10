package api

import (
	"errors"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
)

// The answers of the watcher's routes and of a held dispatch, in one place.

// pendingApprovalAnswer is a dispatch's 202 when the watcher held the call for the
// owner's approval: nothing ran, and the receipt comes once the owner decides or
// the approval expires.
func (s *Server) pendingApprovalAnswer(inv, trace string) map[string]any {
	return map[string]any{
		"pending": true, "ran": false, "status": wire.StatusPendingApproval, "trace": trace,
		"invocation_id": inv, "approval": command.ApprovalPath(inv),
		"receipt": "/receipt/" + inv, "wait": s.waitPath(inv),
		"how_to_fix": "nothing to fix: the row is sensitive, so the call waits for the owner's approval; it runs once approved. " +
			"Wait for its outcome at \"wait\" with the credential the call was made with",
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

// approvalCodes are the "error" of each kind of approvalError.
var approvalCodes = []struct {
	kind error
	code string
}{
	{dispatcher.ErrBadDecision, "bad_decision"},
	{dispatcher.ErrApprovalUnknown, "not_found"},
	{dispatcher.ErrApprovalDecided, "approval_decided"},
	{dispatcher.ErrApprovalExpired, "approval_expired"},
	{dispatcher.ErrApprovalRequestGone, "approval_request_gone"},
}

// approvalIs matches a *command.ApprovalError of kind (any kind when nil).
func approvalIs(kind error) func(error) bool {
	return func(err error) bool {
		var ae *command.ApprovalError
		return errors.As(err, &ae) && (kind == nil || errors.Is(ae.Err, kind))
	}
}

// approvalBody is {"error":<code>,"invocation_id":…,"detail":…}.
func approvalBody(err error) any {
	var ae *command.ApprovalError
	errors.As(err, &ae)
	code := "approval_unavailable"
	for _, c := range approvalCodes {
		if errors.Is(ae.Err, c.kind) {
			code = c.code
			break
		}
	}
	return map[string]any{"error": code, "invocation_id": ae.Inv, "detail": ae.Err.Error()}
}
