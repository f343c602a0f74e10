package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
)

// Sentinel errors.
var (
	// ErrClosed: the handler was closed (the node is stopping); a new session is
	// refused with 503.
	ErrClosed = errors.New("mcp: closed")
	// ErrTooManySessions: a credential that holds Config.MaxSessions sessions,
	// each answering a request, opens another; it is refused with 429.
	ErrTooManySessions = errors.New("mcp: too many sessions")
	// ErrBadArguments: a tool call's arguments cannot be read; nothing is invoked.
	ErrBadArguments = errors.New("mcp: bad arguments")
)

// The literals MCP clients see, produced here and nowhere else: the HTTP answers
// given before any MCP message is read, and the texts of the tool errors capdir
// itself (not the gate or a runner) writes.

// httpAnswer is an HTTP refusal: status and a JSON body.
type httpAnswer struct {
	status     int
	body       map[string]string
	retryAfter int // seconds, for Retry-After; 0 sets none
}

var (
	// answerNoCredential: no credential, or a wrong owner key.
	answerNoCredential = httpAnswer{status: http.StatusUnauthorized, body: map[string]string{
		"error": "unauthorized",
		"how_to_fix": "send the owner key in the x-terminal-key header, or a capability token as Authorization: Bearer <token>, " +
			"on every request of the MCP session (the session keeps the credential it was opened with)",
	}}
	// answerMalformedAuthorization: an Authorization header that is not one bearer token.
	answerMalformedAuthorization = httpAnswer{status: http.StatusUnauthorized, body: map[string]string{
		"error": "token:malformed", "how_to_fix": "send Authorization: Bearer <token>, the token exactly as POST /api/tokens returned it",
	}}
	// answerBothCredentials: the owner key and a token at once.
	answerBothCredentials = httpAnswer{status: http.StatusBadRequest, body: map[string]string{
		"error": "send either the owner key (x-terminal-key) or a capability token (Authorization: Bearer), not both",
	}}
	// answerSessionCredential: a request of a session under another credential
	// than the one that opened it.
	answerSessionCredential = httpAnswer{status: http.StatusForbidden, body: map[string]string{
		"error": "session_credential_mismatch",
		"how_to_fix": "an MCP session keeps the credential it was opened with: send that one, " +
			"or open a new session (initialize without Mcp-Session-Id) with this one",
	}}
	// answerClosed: the node is stopping.
	answerClosed = httpAnswer{status: http.StatusServiceUnavailable, body: map[string]string{
		"error": "unavailable", "how_to_fix": "this node is stopping: connect again once it is back, or to another node",
	}}
)

// answerTooManySessions is the 429 of a session opened by a credential that
// holds max sessions already, none of them idle (each has a request in progress).
func answerTooManySessions(max int) httpAnswer {
	return httpAnswer{status: http.StatusTooManyRequests, retryAfter: 1, body: map[string]string{
		"error": "too_many_sessions",
		"how_to_fix": fmt.Sprintf("this credential holds %d MCP sessions, each answering a request: "+
			"send this session's requests in one of them (its Mcp-Session-Id), or end one with DELETE /mcp, then open a new one", max),
	}}
}

// answerTokenRefused is the 401 of a token that does not hold, with the literal
// reason its receipt would carry.
// answerThrottled is the 429 to an address that sent too many wrong owner keys,
// the key not compared: the HTTP facade's literal.
func answerThrottled(te *ownerkey.ThrottledError) httpAnswer {
	return httpAnswer{status: http.StatusTooManyRequests, body: te.Body(),
		retryAfter: te.RetryAfterSeconds()}
}

func answerTokenRefused(reason, status string) httpAnswer {
	return httpAnswer{status: http.StatusUnauthorized, body: map[string]string{
		"error": reason, "status": status,
		"how_to_fix": "present a capability token this deployment minted, not expired and not revoked, as Authorization: Bearer <token>; " +
			"the owner mints one with POST /api/tokens (capdir token mint)",
	}}
}

// answerBadMode is the 400 of a mode the server does not have.
func answerBadMode(mode string) httpAnswer {
	return httpAnswer{status: http.StatusBadRequest, body: map[string]string{
		"error":      fmt.Sprintf("unknown MCP mode %q", mode),
		"how_to_fix": "connect to /mcp (every row you may call is a tool) or /mcp?mode=search (the tools search, describe and call)",
	}}
}

// argError is a tool call's arguments that cannot be read: its text is the
// literal the tool error carries, ERR:mcp:bad_arguments:<tool>:<reason>.
type argError struct{ literal string }

func (e *argError) Error() string { return e.literal }
func (e *argError) Unwrap() error { return ErrBadArguments }

// badArguments is the error of arguments that cannot be read.
func badArguments(tool, reason string) error {
	return &argError{"ERR:mcp:bad_arguments:" + tool + ":" + reason}
}

// pendingText is the tool error of a call whose receipt did not come in time;
// where names the route its caller waits for the outcome at ("" for none).
func pendingText(inv string, wait time.Duration, where string) string {
	return fmt.Sprintf("pending:%s: no receipt after %v; the call may still finish%s", inv, wait, waitHint(where))
}

// heldText is the tool error of a call the watcher holds for the owner's
// approval: nothing ran yet.
func heldText(inv, where string) string {
	return fmt.Sprintf("approval_pending:%s: the row is sensitive, so the call waits for the owner's approval and runs once approved%s", inv, waitHint(where))
}

func waitHint(where string) string {
	if where == "" {
		return ""
	}
	return ": wait for its outcome at GET " + where + " with this session's credential"
}

// notFoundText is describe's answer for a key the session may not read.
func notFoundText(key string) string {
	return "not_found:" + key + ": search lists the keys you may call (keys are case-sensitive)"
}
