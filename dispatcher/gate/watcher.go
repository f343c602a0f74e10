package gate

import (
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// The watcher: a call to a row marked sensitive from anyone but the owner runs only
// with the owner's approval of that very call. The first delivery of such a
// request is answered with the pending refusal (Refusal.Pending): the worker writes no
// receipt for it, but an APPROVAL_REQUESTED event, and acknowledges it. Once the
// owner approves, capdir appends the request again on its own request subject
// under an event id keyed with the deployment's secret (Input.Rerun): that request
// is admitted if its approval is granted, for its key and its body. The owner's own
// calls run at once: the owner is the approver. Shape mode runs nothing and needs
// no approval. A step (Input.Step: a flow's, an agent's tool call) runs inside
// the call that makes it and cannot be held: one to a sensitive row for a caller
// other than the owner is refused with approval_required:<KEY>, a final receipt,
// even under an approved call (the owner approved that call, not what its steps
// reach).

// Approval states, as Config.Approval reports them.
const (
	// ApprovalNone: no approval was requested for the invocation.
	ApprovalNone = ""
	// ApprovalPending: requested, not decided.
	ApprovalPending = "pending"
	// ApprovalGranted: the owner approved.
	ApprovalGranted = "granted"
	// ApprovalDenied: the owner denied.
	ApprovalDenied = "denied"
	// ApprovalExpired: nobody decided before the approval expired.
	ApprovalExpired = "expired"
)

// Approval is what the gate reads of one invocation's approval.
type Approval struct {
	// State is one of the Approval… states.
	State string
	// By is who decided (owner:terminal-key, engine:<node> for an expiry).
	By string
	// Key and BodyFingerprint (SHA-256, hex) are the request the approval was
	// asked for: the approved call must be that request.
	Key             string
	BodyFingerprint string
	// ExpiresAt is when a pending approval expires.
	ExpiresAt time.Time
}

// watcher holds a sensitive row's call from a caller other than the owner until
// the owner approves it. It is the last check: a request it holds has passed
// every other, so the owner is only asked about calls that would run.
func watcher(g *Gate, in *Input, a *Admission) *Refusal {
	if in.Owner || a.Row.Sensitive != 1 || in.Req.Shape {
		return nil
	}
	if !in.Rerun {
		if in.Step {
			return refuseSensitiveStep(in.Req.Key)
		}
		if !wire.ValidKey(in.Req.InvocationID) {
			return refuseApprovalID()
		}
		return PendingApprovalRefusal()
	}
	ap := Approval{}
	if g.cfg.Approval != nil {
		ap = g.cfg.Approval(in.Req.InvocationID)
	}
	switch {
	case ap.State == ApprovalGranted && ap.Key == in.Req.Key && wire.ApprovalMatches(ap.BodyFingerprint, in.Req):
		return nil
	case ap.State == ApprovalDenied:
		return ApprovalDeniedRefusal()
	case ap.State == ApprovalExpired, ap.State == ApprovalPending && !g.cfg.Clock().Before(ap.ExpiresAt):
		return ApprovalExpiredRefusal()
	}
	return refuseNotApproved()
}
