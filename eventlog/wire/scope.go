package wire

import "strings"

// A bus client's invocation ids are its own. Two clients may choose the same id
// (or one may choose the id another's event id derives): the first request under
// it keeps it, and a request of another client under it is run under the id
// scoped to its client (ScopedInvocationID), as its own call, with its own
// receipt. Neither client sees anything of the other's call; the scoped id of
// the second client's receipt tells it only that the id was taken. The scoped
// id holds ScopeSeparator, which no chosen id may hold (ValidInvocationID), so
// no request can take it from the client it is scoped to; the client's notices
// and repeats still go by the id it chose.

// ScopeSeparator separates the client from the id it chose in a scoped
// invocation id. It is a valid character of a NATS subject token and of a URL
// path segment, and no chosen id or client name holds it.
const ScopeSeparator = "~"

// MaxInvocationIDLen is the longest invocation id a receipt may carry: a scoped
// one (ScopedInvocationID) of the longest client name and chosen id.
const MaxInvocationIDLen = len(InvocationPrefix) + MaxClientNameLen + len(ScopeSeparator) + MaxChosenIDLen

// ScopedInvocationID is the invocation id a request of the bus client named
// client runs under when another sender's request took id first:
// InvocationPrefix, the client's name, ScopeSeparator and the rest of id.
func ScopedInvocationID(client, id string) string {
	return InvocationPrefix + client + ScopeSeparator + strings.TrimPrefix(id, InvocationPrefix)
}

// ClientInvocationID is the id the bus client named client chose for the
// invocation id: id itself unless it is ScopedInvocationID(client, chosen), then
// chosen. Its notices go by it (ReceiptNoticeSubject).
func ClientInvocationID(client, id string) string {
	if rest, ok := strings.CutPrefix(id, InvocationPrefix+client+ScopeSeparator); ok && client != "" {
		return InvocationPrefix + rest
	}
	return id
}

// ValidReceiptID reports whether id can be the invocation id of a receipt a
// caller asks for: one a caller may choose (ValidInvocationID; capdir's own ids
// have that form too) or one scoped to a bus client (ScopedInvocationID).
func ValidReceiptID(id string) bool {
	if ValidInvocationID(id) {
		return true
	}
	rest, ok := strings.CutPrefix(id, InvocationPrefix)
	if !ok {
		return false
	}
	client, chosen, ok := strings.Cut(rest, ScopeSeparator)
	return ok && ValidClientName(client) && ValidInvocationID(InvocationPrefix+chosen)
}
