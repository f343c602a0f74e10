package runner

import (
	"errors"
	"strconv"
)

// Sentinel errors of the runner contract and the shared credential code. Every
// failure a runner reports is an *Error whose Unwrap is a sentinel (these, or a
// runner package's own), so callers match with errors.Is while the caller-visible
// text stays the literal "ERR:..." string.
var (
	// ErrUnknownRunner: the row names a runner that is not registered.
	ErrUnknownRunner = errors.New("runner: unknown runner")
	// ErrCanceled: the caller's context ended before the runner finished.
	ErrCanceled = errors.New("runner: canceled")
	// ErrSubstitutionTooLarge: substituting the arguments into a template would
	// build more than the runner's substitution limit.
	ErrSubstitutionTooLarge = errors.New("runner: substitution too large")
	// ErrResultTooLarge: the target answered with more than the runner's result cap;
	// the result is refused, never cut.
	ErrResultTooLarge = errors.New("runner: result too large")

	// ErrAuthUnknownPrefix: the auth column uses a form other than
	// bearer:, basic:, headers:, query:, oauth:.
	ErrAuthUnknownPrefix = errors.New("runner: auth: unknown prefix")
	// ErrAuthBadSpec: a known auth form is malformed (bad headers JSON, query without "=").
	ErrAuthBadSpec = errors.New("runner: auth: malformed spec")
)

// Error is a failure with the literal text the caller sees. Error() returns Text,
// always beginning "ERR:"; Unwrap returns the sentinel.
type Error struct {
	Kind error
	Text string
}

func (e *Error) Error() string { return e.Text }
func (e *Error) Unwrap() error { return e.Kind }

// NewError is the failure kind with the literal text. Each runner package builds
// its own "ERR:<runner>:..." family with it in its errors.go, and nowhere else.
func NewError(kind error, text string) *Error { return &Error{Kind: kind, Text: text} }

// The literal families shared by every runner.

func errUnknownRunner(name string) *Error {
	return NewError(ErrUnknownRunner, "ERR:runner:unknown:"+name)
}

// Canceled is ERR:<runner>:canceled:<cause>, for a call whose context ended.
func Canceled(runner string, cause error) *Error {
	return NewError(ErrCanceled, "ERR:"+runner+":canceled:"+cause.Error())
}

// ResultTooLarge is ERR:<runner>:result_too_large:<cap>, for a result over the
// runner's cap. A runner refuses such a result whole rather than cutting it: a
// truncated document would pass as a result and break whatever parses it.
func ResultTooLarge(runner string, limit int64) *Error {
	return NewError(ErrResultTooLarge, "ERR:"+runner+":result_too_large:"+strconv.FormatInt(limit, 10))
}

func errSubstitutionTooLarge(limit int) *Error {
	return NewError(ErrSubstitutionTooLarge, "ERR:substitution_too_large:"+strconv.Itoa(limit))
}

func errAuthUnknownPrefix(prefix string) *Error {
	return NewError(ErrAuthUnknownPrefix, "ERR:auth:unknown_prefix:"+prefix)
}

func errAuthBadSpec(prefix, msg string) *Error {
	return NewError(ErrAuthBadSpec, "ERR:auth:bad_spec:"+prefix+":"+msg)
}

var (
	// ErrEnvNotAllowed: the auth column names an environment variable outside the
	// operator's allow-list (SecretEnv), or one of capdir's own (ReservedEnv).
	ErrEnvNotAllowed = errors.New("runner: auth: environment variable not allowed")
	// ErrBadSecretEnv: a pattern of the allow-list is malformed.
	ErrBadSecretEnv = errors.New("runner: bad secret-env pattern")
)

func errEnvNotAllowed(name string) *Error {
	return NewError(ErrEnvNotAllowed, "ERR:auth:env_not_allowed:"+name)
}
