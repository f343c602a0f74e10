package dispatcher

import (
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
)

// receiptEventID is the event id of an invocation's receipt: derived from the
// invocation id, so a second receipt for the same invocation (a redelivered request)
// carries the same Nats-Msg-Id and is dropped by the log's duplicate window.
func receiptEventID(invocationID string) string {
	return receiptIDPrefix + strings.TrimPrefix(invocationID, wire.InvocationPrefix)
}

const receiptIDPrefix = "rcpt_"

// receiptInvocationID is the invocation id a receipt's event id was derived from
// (receiptEventID's inverse for the inv_ ids this engine mints), "" for an event id
// not derived that way.
func receiptInvocationID(eventID string) string {
	if rest, ok := strings.CutPrefix(eventID, receiptIDPrefix); ok {
		return wire.InvocationPrefix + rest
	}
	return ""
}
