package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
)

// Sentinel errors of the facade; those of the command side it meets too are the
// command package's own. Every route answers an error through writeErr, whose one
// table (status.go) maps these, and the command, contract, eventlog and dispatcher
// sentinels the routes meet, to a status and a JSON body.
var (
	// ErrUnauthorized: an owner route without the owner key, or with a wrong one.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNoRoute: no route has the request's path.
	ErrNoRoute = errors.New("not_found")
	// ErrMethodNotAllowed: routes have the request's path, none with its method.
	ErrMethodNotAllowed = errors.New("method_not_allowed")
	// ErrHostNotAllowed: a request reached a loopback listener under a Host that
	// is not loopback nor the public URL's (guardHost).
	ErrHostNotAllowed = errors.New("host_not_allowed")
	// ErrBadRequest: the request is not usable as sent (a malformed dispatch body, a
	// missing or bad query parameter); the error's text says what to fix.
	ErrBadRequest = command.ErrBadRequest
	// ErrBadQuery: a query parameter of a directory route is not usable. It is
	// also an ErrBadRequest.
	ErrBadQuery = command.NewError(ErrBadRequest, "bad query parameter")
	// ErrPayloadTooLarge: a request body, an import row, or a row as the log would
	// store it, is over its limit; the error's text names the limit. Nothing is
	// appended.
	ErrPayloadTooLarge = command.ErrPayloadTooLarge
	// ErrBodyTimeout: the request body stopped arriving before the server's read
	// timeout.
	ErrBodyTimeout = errors.New("request_timeout")
	// ErrTooManyImports: the node runs as many imports as it allows at once
	// (Config.MaxImports); nothing of the refused import was read.
	ErrTooManyImports = errors.New("too_many_imports")
	// ErrNotFound: the key (of a row, or of a breaker to reset) or the invocation id
	// is not known.
	ErrNotFound = command.ErrNotFound
	// ErrExists: a create (POST, or an import row without upsert) names a key that
	// is present.
	ErrExists = command.ErrExists
	// ErrConflict: another writer changed the key between a write's read and its
	// append; nothing was written. It is eventlog.ErrConflict.
	ErrConflict = command.ErrConflict
	// ErrNotVisible: the event was appended but the projector did not apply it
	// within the write timeout. The write happened; a later read will show it.
	ErrNotVisible = command.ErrNotVisible
	// ErrUnavailable: the log or the projection could not be read or written.
	ErrUnavailable = command.ErrUnavailable
	// ErrNoDispatcher: dispatch routes on a node that runs no dispatcher.
	ErrNoDispatcher = command.ErrNoDispatcher
	// ErrDispatchFailed: the dispatcher could not take the request.
	ErrDispatchFailed = errors.New("dispatch failed")
	// ErrUnknownKey: a dispatch named a key no row has. The refusal has a receipt:
	// see UnknownKeyError.
	ErrUnknownKey = errors.New("unknown_key")
	// ErrTokenRefused: a dispatch with a capability token that does not hold (bad
	// signature, expired, revoked, another audience): REFUSED_TOKEN. See
	// TokenRefusedError.
	ErrTokenRefused = errors.New("token_refused")
	// ErrScopeRefused: the token holds but does not permit the call (its scope,
	// risk ceiling or fixed body): REFUSED_SCOPE.
	ErrScopeRefused = errors.New("scope_refused")
	// ErrContractChanged: the token is pinned to a contract the row no longer has:
	// REFUSED_CONTRACT_CHANGED.
	ErrContractChanged = errors.New("contract_changed")
	// ErrTokenPayloadTooLarge: the body is over the token's, or the deployment's,
	// payload ceiling: REFUSED_PAYLOAD_TOO_LARGE.
	ErrTokenPayloadTooLarge = errors.New("token_payload_too_large")
	// ErrInputRefused: the row's input_schema refused the call's arguments
	// (REFUSED_INPUT); nothing ran. See InputRefusedError.
	ErrInputRefused = errors.New("input_refused")
)

// newError is an error of kind whose text is format's; %w in format wraps a cause.
func newError(kind error, format string, args ...any) error {
	return command.NewError(kind, format, args...)
}

// badRequest is an ErrBadRequest whose text is msg.
func badRequest(msg string) error { return command.NewError(ErrBadRequest, "%s", msg) }

// UnknownKeyError is a dispatch to a key no row has. Receipt is the refusal's
// receipt; its result holds the refusal (error, attempted, did_you_mean, ran).
type UnknownKeyError struct {
	Receipt wire.Receipt
}

func (e *UnknownKeyError) Error() string { return "unknown_key: " + e.Receipt.Key }
func (e *UnknownKeyError) Unwrap() error { return ErrUnknownKey }

// TokenRefusedError is a dispatch refused for its capability token: by the entry
// point before anything was appended (Receipt nil), or by the gate (Receipt is the
// refusal's). errors.Is matches the kind of its Status: ErrTokenRefused,
// ErrScopeRefused, ErrContractChanged or ErrTokenPayloadTooLarge.
type TokenRefusedError struct {
	Status  string // the receipt status: wire.StatusRefusedToken, …
	Reason  string // the literal reason (token:expired, scope:KEY, …)
	Receipt *wire.Receipt
}

func (e *TokenRefusedError) Error() string { return e.Reason }
func (e *TokenRefusedError) Unwrap() error { return tokenRefusalKinds[e.Status] }

// tokenRefusalKinds are the receipt statuses of a token refusal, by kind.
var tokenRefusalKinds = map[string]error{
	wire.StatusRefusedToken:           ErrTokenRefused,
	wire.StatusRefusedScope:           ErrScopeRefused,
	wire.StatusRefusedContractChanged: ErrContractChanged,
	wire.StatusRefusedPayloadTooLarge: ErrTokenPayloadTooLarge,
}

// tokenRefusal is rc as a *TokenRefusedError, nil when rc is no token refusal.
func tokenRefusal(rc *wire.Receipt) error {
	if _, ok := tokenRefusalKinds[rc.Status]; !ok {
		return nil
	}
	kept := *rc // the error's own: the dispatch's receipt stays off the heap
	return &TokenRefusedError{Status: rc.Status, Reason: rc.Result, Receipt: &kept}
}

// InputRefusedError is a dispatch whose arguments the row's input_schema refused:
// Response is the dispatch's answer, with its receipt's proof.
type InputRefusedError struct {
	Response DispatchResponse
}

func (e *InputRefusedError) Error() string {
	if e.Response.Result == nil {
		return ErrInputRefused.Error()
	}
	return *e.Response.Result
}
func (e *InputRefusedError) Unwrap() error { return ErrInputRefused }

// credentialError is a refused credential whose answer is its own body: an owner
// route's 401 to a token, a dispatch's 401 without a credential that holds, or
// with an Authorization header that is not one bearer token. It is ErrUnauthorized.
type credentialError struct{ body []byte }

func (e *credentialError) Error() string { return "unauthorized" }
func (e *credentialError) Unwrap() error { return ErrUnauthorized }

// documentNotFound is a contract document whose key has no row the reader may
// discover. It is ErrNotFound.
type documentNotFound struct{ key string }

func (e *documentNotFound) Error() string { return "not_found: " + e.key }
func (e *documentNotFound) Unwrap() error { return ErrNotFound }

// receiptNotFound is an invocation id with neither a receipt nor a request;
// confirm says the public confirm form asked.
type receiptNotFound struct {
	id      string
	confirm bool
}

func (e *receiptNotFound) Error() string { return "no such invocation: " + e.id }
func (e *receiptNotFound) Unwrap() error { return ErrNotFound }

// routeError is a request no route serves: the path is unknown (ErrNoRoute), or
// known with other methods (ErrMethodNotAllowed; allow lists them).
type routeError struct {
	kind  error
	path  string
	allow string
}

func (e *routeError) Error() string { return e.kind.Error() + ": " + e.path }
func (e *routeError) Unwrap() error { return e.kind }

// healthError is GET /healthz's failure: the log did not answer.
type healthError struct{ err error }

func (e *healthError) Error() string        { return e.err.Error() }
func (e *healthError) Is(target error) bool { return target == ErrUnavailable }
func (e *healthError) Unwrap() error        { return e.err }

// The literal texts users see.

// unauthorizedBody is an owner route's answer to a request without the owner key.
var unauthorizedBody = []byte(`{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`)

// dispatchShapeHint is how a POST /api/dispatch body looks.
const dispatchShapeHint = `send {"key":"KEY","body":"arg1|arg2"} (optional "shape":true)`

// dispatchBodyError is the 400 message for a POST /api/dispatch body that does not
// decode: a sentence naming the field and what it must hold, never the decoder's
// Go type names.
func dispatchBodyError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		switch te.Field {
		case "key":
			return `"key" must be a string naming a row, like "GREET"`
		case "body":
			return contract.PipeBodyRule
		case "shape":
			return `"shape" must be true or false`
		}
		return "the dispatch body must be a JSON object; " + dispatchShapeHint
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d (%s); %s", se.Offset, se.Error(), dispatchShapeHint)
	case errors.Is(err, io.EOF):
		return "empty body; " + dispatchShapeHint
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON object is closed; " + dispatchShapeHint
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + `: a dispatch body has only "key", "body" and "shape"`
	}
	return "malformed dispatch body: " + err.Error() + "; " + dispatchShapeHint
}

// maxEcho is the most of a request's own path or Host an answer quotes back.
const maxEcho = 256

// clipEcho is s, a request's path or Host, as an answer quotes it back: cut to
// maxEcho bytes between characters, marked "…", so that nothing a request sends
// makes an answer about as long as itself (or longer, once JSON escapes it).
func clipEcho(s string) string { return clip(s, maxEcho) }

// clip is s cut to n bytes between characters, marked "…", when it is longer.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// clipInvocationID is an unknown invocation id as a 404 quotes it back: no id is
// longer than the longest one capdir takes, so a longer one is cut there.
func clipInvocationID(id string) string { return clip(id, wire.MaxInvocationIDLen) }
