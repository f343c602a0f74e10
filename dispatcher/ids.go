package dispatcher

import (
	"crypto/rand"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/oklog/ulid/v2"
)

// Invocation ids are "inv_" and a lower-case ULID; traces are "t_" and ten random
// base32 characters.
const (
	InvocationPrefix = eventlog.InvocationPrefix
	TracePrefix      = "t_"
)

// NewInvocationID returns a fresh invocation id stamped at t.
func NewInvocationID(t time.Time) string {
	return InvocationPrefix + strings.ToLower(ulid.MustNew(ulid.Timestamp(t), ulid.DefaultEntropy()).String())
}

const traceAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// NewTrace returns a fresh trace id.
func NewTrace() string {
	var b [10]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = traceAlphabet[b[i]&31]
	}
	return TracePrefix + string(b[:])
}

// receiptEventID is the event id of an invocation's receipt: derived from the
// invocation id, so a second receipt for the same invocation (a redelivered request)
// carries the same Nats-Msg-Id and is dropped by the log's duplicate window.
func receiptEventID(invocationID string) string {
	return receiptIDPrefix + strings.TrimPrefix(invocationID, InvocationPrefix)
}

const receiptIDPrefix = "rcpt_"

// receiptInvocationID is the invocation id a receipt's event id was derived from
// (receiptEventID's inverse for the inv_ ids this engine mints), "" for an event id
// not derived that way.
func receiptInvocationID(eventID string) string {
	if rest, ok := strings.CutPrefix(eventID, receiptIDPrefix); ok {
		return InvocationPrefix + rest
	}
	return ""
}
