package wire

import "time"

// The watcher. A call to a row marked sensitive from anyone but the owner waits for
// the owner's approval: the dispatcher appends an APPROVAL_REQUESTED event instead
// of running it, the owner decides with an APPROVAL_DECIDED event, and the call is
// run again (approve) or gets its refusal receipt (deny, or no decision before the
// approval expires). Both events are on ApprovalSubject of the control stream, which
// only capdir's own connection may write.
const (
	TypeApprovalRequested = "APPROVAL_REQUESTED"
	TypeApprovalDecided   = "APPROVAL_DECIDED"
)

// Decisions an APPROVAL_DECIDED carries: the owner's approve or deny, or the
// engine's expire once the approval's time ran out undecided. The first decision
// appended for an invocation is the only one: every decision is appended expecting
// the APPROVAL_REQUESTED to be its subject's last event.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionExpire  = "expire"
)

// ValidDecision reports whether d is one of the three decisions.
func ValidDecision(d string) bool {
	return d == DecisionApprove || d == DecisionDeny || d == DecisionExpire
}

// approvalPrefix starts the control-stream subjects of approvals.
const approvalPrefix = controlPrefix + "approval."

// ApprovalSubject is where the approval of one invocation is requested and
// decided: capdir.ctl.approval.<INVOCATION>. One subject per invocation, so a
// decision can expect the request as the subject's last event, and two decisions
// cannot both be appended. The invocation id must be ValidKey.
func ApprovalSubject(invocationID string) string { return approvalPrefix + invocationID }

// ApprovalRequested is the data of an APPROVAL_REQUESTED event. It names the
// request by its place in the data stream rather than copying it: the control
// stream is kept forever and holds no body and no bearer token.
type ApprovalRequested struct {
	InvocationID string `json:"invocation_id"`
	Key          string `json:"key"`
	Trace        string `json:"trace"`
	// Actor is the caller, as its receipt will name it (token:<sub>).
	Actor string `json:"actor"`
	// BodyFingerprint is the SHA-256 (hex) of the request's input as its caller
	// sent it (InvocationRequest.Sent: the body, or the named arguments), as the
	// receipt's input fingerprint covers it: the request read back by RequestSeq
	// must match it, and so must the input the approved call runs
	// (ApprovalMatches).
	BodyFingerprint string `json:"body_fingerprint"`
	// RequestSeq is the request's sequence on the data stream.
	RequestSeq  uint64    `json:"request_seq"`
	RequestedAt time.Time `json:"requested_at"`
	// ExpiresAt is when the approval expires undecided.
	ExpiresAt time.Time `json:"expires_at"`
}

// ApprovalDecided is the data of an APPROVAL_DECIDED event.
type ApprovalDecided struct {
	InvocationID string `json:"invocation_id"`
	// Decision is DecisionApprove, DecisionDeny or DecisionExpire.
	Decision string `json:"decision"`
	// By is who decided: owner:terminal-key, or engine:<node> for an expiry.
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// ApprovalMatches reports whether fp, an approval's BodyFingerprint, is the
// fingerprint of r's input (Sent). An approval recorded before the fingerprint
// covered named arguments holds the fingerprint of the empty body for a call
// with arguments; it matches too, since the approved call is read back from the
// log at its own sequence, not taken from anyone.
func ApprovalMatches(fp string, r *InvocationRequest) bool {
	if fp == Fingerprint(r.Sent()) {
		return true
	}
	return len(r.Args) > 0 && r.Body == "" && fp == Fingerprint("")
}
