package gate

import (
	"encoding/json"
	"strconv"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog/wire"
)

// Refusal is a request the gate turned away: the receipt's status, the literal
// reason that is the receipt's result, and any structured detail for its extra.
type Refusal struct {
	Status string
	Reason string
	Extra  map[string]any
	// Kind is empty for a refusal that becomes a receipt, KindPending for a request
	// held for the owner's approval (watcher.go): that one gets no receipt yet.
	Kind string
}

// The literal refusals, each built from its entry of Failures (failures.go) here
// and nowhere else.

func refusePayload(size, ceiling int) *Refusal {
	return &Refusal{Status: wire.StatusRefusedPayloadTooLarge, Reason: failPayload.Fill(strconv.Itoa(size), strconv.Itoa(ceiling))}
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
	return &Refusal{Status: wire.StatusRefusedUnknownKey, Reason: string(b), Extra: body}
}

func refuseDirectory(err error) *Refusal {
	return &Refusal{Status: wire.StatusFailedBeforeRun, Reason: failDirectory.Fill(err.Error())}
}

func refuseDisabled(key string) *Refusal {
	return &Refusal{Status: wire.StatusRefusedDisabled, Reason: failDisabled.Fill(key)}
}

func refuseBreakerUnreadable(err error) *Refusal {
	return &Refusal{Status: wire.StatusFailedBeforeRun, Reason: failBreakerUnreadable.Fill(err.Error())}
}

// refuseBreakerOpen is the breaker's literal; a refusal of this caller alone (its
// own run tripped, the row open to others) says so in "caller_only".
func refuseBreakerOpen(key string, threshold int, d breaker.Decision) *Refusal {
	extra := map[string]any{"opened_at": d.OpenedAt, "closes_at": d.ClosesAt}
	if d.Caller {
		extra["caller_only"] = true
	}
	return &Refusal{Status: wire.StatusRefusedBreakerOpen, Reason: breaker.Message(key, threshold), Extra: extra}
}

// The watcher's (watcher.go). A held call is answered approval_pending and gets its
// receipt later: approval_denied or approval_expired, or the call's own.

// PendingApprovalRefusal is the answer to a call held for the owner's approval.
func PendingApprovalRefusal() *Refusal {
	return &Refusal{Status: wire.StatusPendingApproval, Reason: failPendingApproval.Literal, Kind: KindPending}
}

// ApprovalDeniedRefusal is the refusal on the receipt of a call the owner denied.
func ApprovalDeniedRefusal() *Refusal {
	return &Refusal{Status: wire.StatusRefusedApprovalDenied, Reason: failApprovalDenied.Literal}
}

// ApprovalExpiredRefusal is the refusal on the receipt of a call whose approval
// expired undecided.
func ApprovalExpiredRefusal() *Refusal {
	return &Refusal{Status: wire.StatusRefusedApprovalExpired, Reason: failApprovalExpired.Literal}
}

// refuseSensitiveStep: approval_required:<KEY>, a step to a sensitive row for a
// caller other than the owner, which cannot be held for approval.
func refuseSensitiveStep(key string) *Refusal {
	return &Refusal{Status: wire.StatusRefusedApprovalRequired, Reason: failApprovalRequired.Fill(key)}
}

// refuseApprovalID: a bus client named an invocation id that cannot name an
// approval's subject, so the owner cannot be asked.
func refuseApprovalID() *Refusal {
	return &Refusal{Status: wire.StatusRefusedBadRequest, Reason: failApprovalID.Literal}
}

// refuseNotApproved: a re-run whose approval is not granted for its key and body.
func refuseNotApproved() *Refusal {
	return &Refusal{Status: wire.StatusRefusedBadRequest, Reason: failNotApproved.Literal}
}
