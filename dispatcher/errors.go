package dispatcher

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

var (
	// ErrDrainCut is returned by Drain when its context ended with calls still in
	// flight: they were cancelled, got no receipt, and their requests are run again
	// by another worker or the next start. It wraps the context's error too.
	ErrDrainCut = errors.New("dispatcher: drain cut short")
	// ErrReceiptTooLarge: the log refuses the receipt for its size. A retry
	// cannot mend it; the engine stores a small failure receipt instead.
	ErrReceiptTooLarge = errors.New("dispatcher: receipt too large for one event")
	// ErrReceiptUnstorable: the log refuses the receipt for a reason a retry
	// cannot mend (it cannot be encoded, its subject is invalid).
	ErrReceiptUnstorable = errors.New("dispatcher: receipt refused by the log")
	// ErrBadIdempotencyKey: an Idempotency-Key that is not 1 to
	// MaxIdempotencyKeyLen visible ASCII characters. Nothing is appended.
	ErrBadIdempotencyKey = errors.New("bad_idempotency_key")
	// ErrIdempotencyKeyReused: the caller already used the Idempotency-Key for
	// another request (another key, body, arguments or shape). Nothing is
	// appended, nothing runs.
	ErrIdempotencyKeyReused = errors.New("idempotency_key_reused")
	// ErrNotAppended: the wait for a receipt ended before the log acknowledged
	// the request, and the log does not hold it (the acknowledgement was lost
	// with a server, or the log could not be asked): no invocation id is handed
	// out for a request that may not exist. Send the request again.
	ErrNotAppended = errors.New("dispatcher: the request is not in the log: the log did not acknowledge it before the wait ended, and does not hold it; nothing was handed out to look up; send the request again")
	// ErrRepeatRefused: a request repeating an earlier one (the same
	// Idempotency-Key) whose caller the gate refuses now. The concrete error is
	// a *RefusedError. Nothing is appended, nothing runs.
	ErrRepeatRefused = errors.New("dispatcher: repeated request refused by the gate")
	// ErrCallWithheld: MayRead's answer for a call whose arguments the
	// token's fixed body or payload ceiling refuses; answer it as another
	// caller's call.
	ErrCallWithheld = errors.New("dispatcher: the call's arguments are not this token's to send")
)

// RefusedError is the gate's refusal of a request that repeats an earlier one:
// with the credential it presents now, the caller could not make the call (a
// revoked token, a key outside its scope, a pin or risk ceiling it does not
// meet), so it is not given the earlier call's receipt. Status and Reason are
// what the receipt of the same request sent fresh would carry
// (wire.StatusRefusedScope and scope:<KEY>, …), Extra its structured detail.
type RefusedError struct {
	Status string
	Reason string
	Extra  map[string]any
}

func (e *RefusedError) Error() string { return e.Reason }
func (e *RefusedError) Unwrap() error { return ErrRepeatRefused }

// The owner's decisions on approvals (approval.go).
var (
	// ErrBadDecision: a decision other than approve or deny.
	ErrBadDecision = errors.New(`dispatcher: the decision must be "approve" or "deny"`)
	// ErrApprovalUnknown: no approval was requested for the invocation.
	ErrApprovalUnknown = errors.New("dispatcher: no approval was requested for this invocation")
	// ErrApprovalDecided: the approval already has its decision; the first stands.
	ErrApprovalDecided = errors.New("dispatcher: the approval is already decided")
	// ErrApprovalExpired: the approval expired before a decision.
	ErrApprovalExpired = errors.New("dispatcher: the approval has expired")
	// ErrApprovalRequestGone: the request the approval names is no longer in the
	// log (the data stream's retention removed it) or is not the request the
	// approval was asked for, so it cannot run.
	ErrApprovalRequestGone = errors.New("dispatcher: the request the approval names is not in the log")
)

// drainCut is the error of a drain that had to cancel n calls because of cause.
func drainCut(n int, cause error) error {
	return fmt.Errorf("%w: %d call(s) in flight cancelled, without a receipt; their requests will be run again: %w", ErrDrainCut, n, cause)
}

// receiptTooLarge is the error for a receipt whose data is size bytes.
func receiptTooLarge(size int, cause error) error {
	return fmt.Errorf("%w: %d bytes: %w", ErrReceiptTooLarge, size, cause)
}

// receiptFailure is the result a failure receipt carries in place of the one the
// log refused: ERR:receipt:too_large:<bytes of the refused receipt's data>, or
// ERR:receipt:unstorable.
func receiptFailure(err error, size int) *failure.Error {
	if errors.Is(err, ErrReceiptTooLarge) {
		return failReceiptTooLarge.New(strconv.Itoa(size))
	}
	return failReceiptUnstorable.New()
}

// The dispatcher's own failures: a receipt the log refused, a step refused for
// its place in its call tree. Each literal is built from its entry, here and
// nowhere else.
var (
	failReceiptTooLarge = failure.Entry{
		Literal: "ERR:receipt:too_large:<bytes>", Kind: ErrReceiptTooLarge, Fault: failure.FaultService,
		Cause: "the call ran, but its receipt is over what the log stores; this receipt stands in for it",
		Fix:   "ask for a smaller result; the call is not run again",
	}
	failReceiptUnstorable = failure.Entry{
		Literal: "ERR:receipt:unstorable", Kind: ErrReceiptUnstorable, Fault: failure.FaultNode,
		Cause: "the call ran, but the log refused its receipt for good; this receipt stands in for it",
		Fix:   "report it: the log could not store the receipt as written",
	}
	failCycle = failure.Entry{
		Literal: "ERR:flow:cycle:<keys>", Kind: ErrCycle, Fault: failure.FaultRow,
		Cause: "a step would call a key already on its chain (a flow or agent reaching itself); the keys of the loop, joined by >",
		Fix:   "the owner breaks the loop: a row may not call itself, directly or through others",
	}
	failTooDeep = failure.Entry{
		Literal: "ERR:flow:depth:<depth>><max>", Kind: ErrTooDeep, Fault: failure.FaultRow,
		Cause: "a step would nest deeper than the node allows",
		Fix:   "the owner flattens the flows",
	}
	failTreeSteps = failure.Entry{
		Literal: "ERR:flow:tree_steps:<n>><max>", Kind: ErrTreeSteps, Fault: failure.FaultRow,
		Cause: "a step would be one more than one call tree allows",
		Fix:   "the owner makes the flows run fewer steps in all",
	}
)

// Failures is the dispatcher's failure table.
var Failures = failure.Table{failReceiptTooLarge, failReceiptUnstorable, failCycle, failTooDeep, failTreeSteps}

// appendFailure classifies an append's failure: one a retry cannot mend (the
// event is too large for the connection or the stream, its subject is invalid,
// it is not a valid event) is wrapped in ErrReceiptTooLarge or
// ErrReceiptUnstorable; any other (a timeout, no responders while a stream
// elects its leader, a closed connection, an ended context) is returned as is.
// size is the length of the receipt's data.
func appendFailure(err error, size int) error {
	switch {
	case eventlog.TooLarge(err):
		return receiptTooLarge(size, err)
	case eventlog.BadSubject(err), errors.Is(err, wire.ErrBadEvent):
		return fmt.Errorf("%w: %w", ErrReceiptUnstorable, err)
	}
	return err
}

// permanent reports whether a receipt's append failed for good (see appendFailure).
func permanent(err error) bool {
	return errors.Is(err, ErrReceiptTooLarge) || errors.Is(err, ErrReceiptUnstorable)
}

// Sentinel errors of steps: the invocations a composing runner (flow, agent)
// makes through its call's runner.Invoker (sub.go).
var (
	// ErrCycle: a step would invoke a key already on its chain of ancestors (a
	// flow or agent reaching itself, directly or through others). The step is
	// refused with ERR:flow:cycle:<KEY>><…>><KEY>; nothing runs.
	ErrCycle = errors.New("dispatcher: step cycle")
	// ErrTooDeep: a step would be deeper than ServiceConfig.MaxDepth. It is
	// refused with ERR:flow:depth:<depth>><max>; nothing runs.
	ErrTooDeep = errors.New("dispatcher: steps nested too deep")
	// ErrTreeSteps: a step would be one more than ServiceConfig.MaxTreeSteps in
	// its call tree. It is refused with ERR:flow:tree_steps:<n>><max>; nothing runs.
	ErrTreeSteps = errors.New("dispatcher: too many steps in one call tree")
	// ErrStepName: a runner named a step with something other than 1 to 128
	// characters of A-Z a-z 0-9 _ - and '.'. Nothing is appended.
	ErrStepName = errors.New("dispatcher: bad step name")
	// ErrStepKey: a runner asked for a step of a key no row can have.
	ErrStepKey = errors.New("dispatcher: bad step key")
	// ErrStepMismatch: a redelivered call asked for a step whose stored receipt
	// is for another key or another body (an agent whose model chose differently
	// the second time). The stored step is not run again, nor a new one under
	// its name.
	ErrStepMismatch = errors.New("dispatcher: step already ran differently")
	// ErrStepTruncated: a redelivered call asked for a completed step whose
	// stored result was cut to fit the receipt: it cannot be reused whole.
	ErrStepTruncated = errors.New("dispatcher: stored step result is truncated")
	// ErrNoRow: a row a composing runner asked for (an agent's include) does not
	// exist, is disabled, or is outside what the caller may invoke: the three
	// read alike, so a token holder learns nothing of rows outside its scope.
	ErrNoRow = errors.New("no such row for this caller")
)

// errCycle is the refusal of a step of key under chain, the keys from the
// top-level call down to its parent: ERR:flow:cycle:, then the keys from key's
// first place in chain down to key again, joined by '>'.
func errCycle(chain []string, key string) *failure.Error {
	loop := chain[slices.Index(chain, key):]
	return failCycle.New(strings.Join(loop, ">") + ">" + key)
}

// errTreeSteps is the refusal of the n-th step of a call tree allowed limit.
func errTreeSteps(n int64, limit int) *failure.Error {
	return failTreeSteps.New(strconv.FormatInt(n, 10), strconv.Itoa(limit))
}

// errTooDeep is the refusal of a step at depth over limit.
func errTooDeep(depth, limit int) *failure.Error {
	return failTooDeep.New(strconv.Itoa(depth), strconv.Itoa(limit))
}

// A bus client's call refused at once (responder.go): nothing is appended,
// nothing runs. The reply's literal is the error's text.
var (
	// ErrBadCall: the call is not a request a worker could run: not an
	// INVOCATION_REQUESTED event, undecodable, an event id that is not 1 to 64
	// characters of A-Z a-z 0-9 _ -, a key that is not its subject's, a malformed
	// invocation id.
	ErrBadCall = errors.New("bad_request")
	// ErrCallNotAppended: the log did not store the request; the same request
	// sent again may be.
	ErrCallNotAppended = errors.New("not_appended")
	// ErrCallBusy: the node answering the call is answering as many calls as it
	// takes at once (Settings.MaxCalls); the same call sent again later may be
	// taken.
	ErrCallBusy = errors.New("busy")
	// ErrCallUntold: the node could not yet tell that the receipt it found is the
	// calling client's own call's (its request not yet folded where it looked);
	// the same call sent again is answered once it can.
	ErrCallUntold = errors.New("not_yet_known")
)

// DefaultMaxCalls is the calls one node answers at once when Settings.MaxCalls is
// 0: each waiting call holds a goroutine (a few KiB) and a waiter, so 4096 hold
// some tens of MiB; more callers than that are better served by a second node.
const DefaultMaxCalls = 4096

// callBusyFix is the how_to_fix of a call refused as busy (ErrCallBusy).
const callBusyFix = "send the same call again (the same invocation id) after a short wait, and make fewer calls at once: every node takes a bounded number"
