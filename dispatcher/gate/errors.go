package gate

import (
	"encoding/json"
	"strconv"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/eventlog/wire"
)

// Refusal is a request the gate turned away: a failure.Error whose Literal is the
// receipt's result (built from its entry of Failures), with the receipt's status
// and any structured detail for its extra.
type Refusal struct {
	failure.Error
	Status string
	Extra  map[string]any
	// Pending is set for a request held for the owner's approval (watcher.go):
	// that one gets no receipt yet.
	Pending bool
	// Check names the check that refused (Check sets it): a trace's gate span
	// names it, as the literal may hold what the caller sent.
	Check string
	// quotesInput says the literal is made of the input sent (its fingerprint
	// or its size): OfTheArguments.
	quotesInput bool
}

// refuse is the refusal of status whose literal is e's, its parts filled.
func refuse(status string, e failure.Entry, parts ...string) *Refusal {
	return &Refusal{Error: *e.New(parts...), Status: status}
}

// The literal refusals, each built from its entry of Failures (failures.go) here
// and nowhere else.

func refusePayload(size, ceiling int) *Refusal {
	r := refuse(wire.StatusRefusedPayloadTooLarge, failPayload, strconv.Itoa(size), strconv.Itoa(ceiling))
	r.quotesInput = true
	return r
}

// UnknownKey is the refusal body for a key no row has:
// {"error":"unknown_key","attempted":…,"ran":false,"did_you_mean":[…]}.
func UnknownKey(attempted string, didYouMean []string) map[string]any {
	if didYouMean == nil {
		didYouMean = []string{}
	}
	return map[string]any{"error": "unknown_key", "attempted": attempted, "ran": false, "did_you_mean": didYouMean}
}

func refuseUnknownKey(key string, didYouMean []string) *Refusal {
	body := UnknownKey(key, didYouMean)
	b, _ := json.Marshal(body) // plain strings and a bool
	return &Refusal{Error: failure.Error{Literal: string(b)}, Status: wire.StatusRefusedUnknownKey, Extra: body}
}

func refuseDirectory(err error) *Refusal {
	return refuse(wire.StatusFailedBeforeRun, failDirectory, err.Error())
}

func refuseDisabled(key string) *Refusal {
	return refuse(wire.StatusRefusedDisabled, failDisabled, key)
}

func refuseBreakerUnreadable(err error) *Refusal {
	return refuse(wire.StatusFailedBeforeRun, failBreakerUnreadable, err.Error())
}

// refuseBreakerOpen is the breaker's literal; a refusal of this caller alone (its
// own run tripped, the row open to others) says so in "caller_only".
func refuseBreakerOpen(key string, threshold int, d breaker.Decision) *Refusal {
	extra := map[string]any{"opened_at": d.OpenedAt, "closes_at": d.ClosesAt}
	if d.Caller {
		extra["caller_only"] = true
	}
	return &Refusal{Error: failure.Error{Literal: breaker.Message(key, threshold)}, Status: wire.StatusRefusedBreakerOpen, Extra: extra}
}

// The watcher's (watcher.go). A held call is answered approval_pending and gets its
// receipt later: approval_denied or approval_expired, or the call's own.

// PendingApprovalRefusal is the answer to a call held for the owner's approval.
func PendingApprovalRefusal() *Refusal {
	return &Refusal{Error: *failPendingApproval.New(), Status: wire.StatusPendingApproval, Pending: true}
}

// ApprovalDeniedRefusal is the refusal on the receipt of a call the owner denied.
func ApprovalDeniedRefusal() *Refusal {
	return refuse(wire.StatusRefusedApprovalDenied, failApprovalDenied)
}

// ApprovalExpiredRefusal is the refusal on the receipt of a call whose approval
// expired undecided.
func ApprovalExpiredRefusal() *Refusal {
	return refuse(wire.StatusRefusedApprovalExpired, failApprovalExpired)
}

// refuseSensitiveStep: approval_required:<KEY>, a step to a sensitive row for a
// caller other than the owner, which cannot be held for approval.
func refuseSensitiveStep(key string) *Refusal {
	return refuse(wire.StatusRefusedApprovalRequired, failApprovalRequired, key)
}

// refuseApprovalID: a bus client named an invocation id that cannot name an
// approval's subject, so the owner cannot be asked.
func refuseApprovalID() *Refusal {
	return refuse(wire.StatusRefusedBadRequest, failApprovalID)
}

// refuseNotApproved: a re-run whose approval is not granted for its key and body.
func refuseNotApproved() *Refusal {
	return refuse(wire.StatusRefusedBadRequest, failNotApproved)
}
