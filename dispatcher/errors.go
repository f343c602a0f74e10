package dispatcher

import (
	"errors"
	"strconv"
	"time"
)

// Sentinel errors. Every failure a runner reports is an *Error whose Unwrap is one of
// these, so callers match with errors.Is while the caller-visible text stays the
// article's literal "ERR:..." string.
var (
	// ErrUnknownRunner: the row names a runner that is not registered.
	ErrUnknownRunner = errors.New("dispatcher: unknown runner")
	// ErrCanceled: the caller's context ended before the runner finished.
	ErrCanceled = errors.New("dispatcher: canceled")

	// ErrAuthUnknownPrefix: the auth column uses a form other than
	// bearer:, basic:, headers:, query:, oauth:.
	ErrAuthUnknownPrefix = errors.New("dispatcher: auth: unknown prefix")
	// ErrAuthBadSpec: a known auth form is malformed (bad headers JSON, query without "=").
	ErrAuthBadSpec = errors.New("dispatcher: auth: malformed spec")

	// ErrFnUnknownTarget: the fn row names a function absent from the registry.
	ErrFnUnknownTarget = errors.New("dispatcher: fn: unknown target")
	// ErrFnBadContentJSON: the substituted template is not valid JSON.
	ErrFnBadContentJSON = errors.New("dispatcher: fn: content is not JSON")
	// ErrFnContentNotArray: the substituted template is JSON but not an array.
	ErrFnContentNotArray = errors.New("dispatcher: fn: content is not an array")
	// ErrFnFailed: the function returned an error.
	ErrFnFailed = errors.New("dispatcher: fn: function failed")
	// ErrNoReplyBlock: last_reply_of found no complete [REPLY]...[/REPLY] block.
	ErrNoReplyBlock = errors.New("no_reply_block")

	// ErrHTTPBadTarget: the http target does not render to "METHOD url".
	ErrHTTPBadTarget = errors.New("dispatcher: http: bad target")
	// ErrHTTPAuth: applying the row's credential failed.
	ErrHTTPAuth = errors.New("dispatcher: http: auth")
	// ErrHTTPStatus: the upstream answered 4xx or 5xx.
	ErrHTTPStatus = errors.New("dispatcher: http: upstream status")
	// ErrHTTPFetch: DNS, TLS or connection failure.
	ErrHTTPFetch = errors.New("dispatcher: http: fetch failed")
	// ErrHTTPTimeout: the upstream did not answer within the configured timeout.
	ErrHTTPTimeout = errors.New("dispatcher: http: timeout")
	// ErrHTTPResponseTooLarge: the upstream body exceeded the response cap.
	ErrHTTPResponseTooLarge = errors.New("dispatcher: http: response too large")

	// ErrNATSBadTarget: the nats row has no subject.
	ErrNATSBadTarget = errors.New("dispatcher: nats: bad target")
	// ErrNATSNoResponders: nobody subscribes to the subject.
	ErrNATSNoResponders = errors.New("dispatcher: nats: no responders")
	// ErrNATSTimeout: no reply within the configured timeout.
	ErrNATSTimeout = errors.New("dispatcher: nats: timeout")
	// ErrNATSRequest: any other request failure.
	ErrNATSRequest = errors.New("dispatcher: nats: request failed")
)

// Error is a failure with the literal text the caller sees. Error() returns Text,
// always beginning "ERR:"; Unwrap returns the sentinel.
type Error struct {
	Kind error
	Text string
}

func (e *Error) Error() string { return e.Text }
func (e *Error) Unwrap() error { return e.Kind }

func newErr(kind error, text string) *Error { return &Error{Kind: kind, Text: text} }

// The literal families. Each "ERR:..." string is produced here and nowhere else.

func errUnknownRunner(name string) *Error {
	return newErr(ErrUnknownRunner, "ERR:runner:unknown:"+name)
}

func errCanceled(runner string, cause error) *Error {
	return newErr(ErrCanceled, "ERR:"+runner+":canceled:"+cause.Error())
}

func errAuthUnknownPrefix(prefix string) *Error {
	return newErr(ErrAuthUnknownPrefix, "ERR:auth:unknown_prefix:"+prefix)
}

func errAuthBadSpec(prefix, msg string) *Error {
	return newErr(ErrAuthBadSpec, "ERR:auth:bad_spec:"+prefix+":"+msg)
}

func errFnUnknownTarget(name string) *Error {
	return newErr(ErrFnUnknownTarget, "ERR:fn:unknown_target:"+name)
}

func errFnBadContentJSON(msg string) *Error {
	return newErr(ErrFnBadContentJSON, "ERR:fn:bad_content_json:"+msg)
}

func errFnContentNotArray() *Error {
	return newErr(ErrFnContentNotArray, "ERR:fn:content_not_array")
}

func errFnFailed(target string, err error) *Error {
	return &Error{Kind: errors.Join(ErrFnFailed, err), Text: "ERR:fn:" + target + ":" + err.Error()}
}

func errHTTPBadTarget(msg string) *Error {
	return newErr(ErrHTTPBadTarget, "ERR:http:bad_target:"+msg)
}

// errHTTPAuth wraps an auth failure as the article prints it:
// ERR:http:<KEY>:ERR:auth:unknown_prefix:<prefix>.
func errHTTPAuth(key string, err error) *Error {
	return &Error{Kind: errors.Join(ErrHTTPAuth, err), Text: "ERR:http:" + key + ":" + err.Error()}
}

func errHTTPStatus(status int, body string) *Error {
	return newErr(ErrHTTPStatus, "ERR:http:"+strconv.Itoa(status)+":"+body)
}

func errHTTPFetch(msg string) *Error {
	return newErr(ErrHTTPFetch, "ERR:http:fetch:"+msg)
}

func errHTTPTimeout(d time.Duration) *Error {
	return newErr(ErrHTTPTimeout, "ERR:http:timeout:"+d.String())
}

func errHTTPResponseTooLarge(limit int64) *Error {
	return newErr(ErrHTTPResponseTooLarge, "ERR:http:response_too_large:"+strconv.FormatInt(limit, 10))
}

func errNATSBadTarget() *Error {
	return newErr(ErrNATSBadTarget, "ERR:nats:bad_target:empty_subject")
}

func errNATSNoResponders(subject string) *Error {
	return newErr(ErrNATSNoResponders, "ERR:nats:no_responders:"+subject)
}

func errNATSTimeout(subject string) *Error {
	return newErr(ErrNATSTimeout, "ERR:nats:timeout:"+subject)
}

func errNATSRequest(subject, msg string) *Error {
	return newErr(ErrNATSRequest, "ERR:nats:request:"+subject+":"+msg)
}
