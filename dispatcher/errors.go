package dispatcher

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
)

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
func receiptFailure(err error, size int) *runner.Error {
	if errors.Is(err, ErrReceiptTooLarge) {
		return runner.NewError(ErrReceiptTooLarge, "ERR:receipt:too_large:"+strconv.Itoa(size))
	}
	return runner.NewError(ErrReceiptUnstorable, "ERR:receipt:unstorable")
}

// appendFailure classifies an append's failure: one a retry cannot mend (the
// event is too large for the connection or the stream, its subject is invalid,
// it is not a valid event) is wrapped in ErrReceiptTooLarge or
// ErrReceiptUnstorable; any other (a timeout, no responders while a stream
// elects its leader, a closed connection, an ended context) is returned as is.
// size is the length of the receipt's data.
func appendFailure(err error, size int) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrMaxPayload),
		errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum:
		return receiptTooLarge(size, err)
	case errors.Is(err, nats.ErrBadSubject), errors.Is(err, wire.ErrBadEvent):
		return fmt.Errorf("%w: %w", ErrReceiptUnstorable, err)
	}
	return err
}

// permanent reports whether a receipt's append failed for good (see appendFailure).
func permanent(err error) bool {
	return errors.Is(err, ErrReceiptTooLarge) || errors.Is(err, ErrReceiptUnstorable)
}
