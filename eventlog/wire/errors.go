package wire

import "errors"

var (
	// ErrBadEvent is returned when a message is not a valid envelope.
	ErrBadEvent = errors.New("wire: bad event")
	// ErrBadKey is returned for a key that is not 1 to MaxKeyLen characters of
	// A-Z a-z 0-9 _ -.
	ErrBadKey = errors.New("wire: bad key")
	// ErrBadClient is returned for a bus client name that is not 1 to
	// MaxClientNameLen characters of A-Z a-z 0-9 _ -.
	ErrBadClient = errors.New("wire: bad bus client name")
	// ErrInboxPrefix is returned by Invoke on a connection whose inbox prefix is not
	// the client's (see ClientOptions): the server would refuse the replies.
	ErrInboxPrefix = errors.New("wire: wrong inbox prefix")
	// ErrRefused is returned by Invoke when the server refused to let the client
	// publish its request: the credential is not the named client's.
	ErrRefused = errors.New("wire: request refused by the server")
	// ErrBadOption is returned for an invalid Invoke option.
	ErrBadOption = errors.New("wire: bad option")
	// ErrClientClosed is returned by Client.Invoke once the Client is closed.
	ErrClientClosed = errors.New("wire: bus client closed")
	// ErrBadInvocationID is returned for a chosen invocation id that is not
	// InvocationPrefix and 1 to MaxChosenIDLen characters of A-Z a-z 0-9 _ -.
	ErrBadInvocationID = errors.New("wire: bad invocation id")
	// ErrInvocationIDReused is returned by Invoke when the invocation id chosen with
	// WithInvocationID was already used by this client for another request (one
	// the token it carries could not make gets ErrRepeatRefused instead).
	ErrInvocationIDReused = errors.New("wire: invocation id reused for another request")
	// ErrRepeatRefused is returned by Invoke for a request sent again under the
	// invocation id of WithInvocationID when the token it carries now would not
	// let the client make the call (revoked, out of scope, …), or for another
	// request under that id that the token could not make: the first
	// request's receipt is not sent. The returned Receipt carries the refusal's
	// status and literal (Status, Result), as a fresh call's receipt would; it is
	// not stored.
	ErrRepeatRefused = errors.New("wire: repeated request refused by the gate")
	// ErrCallRefused is returned by Call when capdir answered that it could not
	// take the request (malformed, too large, not appended): nothing of it is in
	// the log, nothing ran. The error carries capdir's literal reason.
	ErrCallRefused = errors.New("wire: call refused")
	// ErrCallRetry is returned by Call, beside ErrCallRefused, when capdir said
	// the refused request may be taken if sent again (the log did not store it,
	// the node was answering as many calls as it takes): send it again, under the
	// same invocation id, after a short wait.
	ErrCallRetry = errors.New("retry")
	// ErrNoCapdir is returned by Call when no capdir node answers calls on the
	// client's call subject.
	ErrNoCapdir = errors.New("wire: no capdir node answers calls")
)

var (
	// ErrBadSubject: a subject a row names is not one literal NATS subject (empty,
	// whitespace, a wildcard, an empty token). The concrete error is a *SubjectError.
	ErrBadSubject = errors.New("wire: bad subject")
	// ErrReservedSubject: a subject a row names belongs to NATS's own API, to another
	// caller's replies or to capdir's log (see ReservedSubject). The concrete error is
	// a *SubjectError.
	ErrReservedSubject = errors.New("wire: reserved subject")
)
