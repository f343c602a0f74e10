package runner

import (
	"errors"
	"strconv"

	"github.com/capdir/capdir/contract/failure"
)

// Sentinel errors of the runner contract and the shared credential code. Every
// failure a runner reports is a *failure.Error whose kind is a sentinel (these, or a
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

// The literal families shared by every runner. Each is built from its entry of
// Failures, and nowhere else; a runner package builds its own "ERR:<runner>:..."
// family the same way in its errors.go, from its own table.
var (
	failUnknownRunner = failure.Entry{
		Literal: "ERR:runner:unknown:<name>", Kind: ErrUnknownRunner, Fault: failure.FaultRow,
		Cause: "the row names a runner this node does not run",
		Fix:   "set the row's runner (or type) to fn, http, nats, flow, agent or mcp",
	}
	failBug = failure.Entry{
		Literal: "ERR:runner:<message>", Fault: failure.FaultNode,
		Cause: "a runner failed in a way it has no literal for: a bug of capdir",
		Fix:   "report it with the receipt; the message says where",
	}
	failCanceled = failure.Entry{
		Literal: "ERR:<runner>:canceled:<cause>", Kind: ErrCanceled, Fault: failure.FaultCall,
		Cause: "the caller went away, or its deadline passed, before the runner finished",
		Fix:   "call again with a longer wait; the receipt says whether anything ran",
	}
	failResultTooLarge = failure.Entry{
		Literal: "ERR:<runner>:result_too_large:<cap>", Kind: ErrResultTooLarge, Fault: failure.FaultService,
		Cause: "the result is over the runner's result cap; it is refused whole, never cut",
		Fix:   "ask for less (a narrower query, a page), or the operator raises the cap",
	}
	failSubstitutionTooLarge = failure.Entry{
		Literal: "ERR:substitution_too_large:<limit>", Kind: ErrSubstitutionTooLarge, Fault: failure.FaultCall,
		Cause: "the arguments substituted into the row's template would pass the substitution limit",
		Fix:   "send shorter arguments, or pass large data by reference",
	}
	failAuthUnknownPrefix = failure.Entry{
		Literal: "ERR:auth:unknown_prefix:<prefix>", Kind: ErrAuthUnknownPrefix, Fault: failure.FaultRow,
		Cause: "the auth column is not bearer:, basic:, headers:, query: or oauth:",
		Fix:   "the owner writes a supported form naming an environment variable",
	}
	failAuthBadSpec = failure.Entry{
		Literal: "ERR:auth:bad_spec:<form>:<message>", Kind: ErrAuthBadSpec, Fault: failure.FaultRow,
		Cause: "the auth column has a known form but is malformed (headers not JSON, query without =)",
		Fix:   "the owner repairs the auth column as the message says",
	}
	failEnvNotAllowed = failure.Entry{
		Literal: "ERR:auth:env_not_allowed:<NAME>", Kind: ErrEnvNotAllowed, Fault: failure.FaultNode,
		Cause: "the auth column names a variable outside the operator's --secret-env allow-list, or one of capdir's own",
		Fix:   "the operator allows the name with --secret-env, or the owner names an allowed variable",
	}
)

// Failures is the failure table of the literals every runner shares.
var Failures = failure.Table{
	failUnknownRunner, failBug, failCanceled, failResultTooLarge, failSubstitutionTooLarge,
	failAuthUnknownPrefix, failAuthBadSpec, failEnvNotAllowed,
}

// CanceledEntry is ERR:<runner>:canceled:<cause> as the runner called name writes
// it, for the runner's own table.
func CanceledEntry(name string) failure.Entry { return failCanceled.With(name) }

// ResultTooLargeEntry is ERR:<runner>:result_too_large:<cap> as the runner called
// name writes it, for the table of a runner that caps its results so.
func ResultTooLargeEntry(name string) failure.Entry { return failResultTooLarge.With(name) }

// SubstitutionTooLargeEntry is ERR:substitution_too_large:<limit>, for the table
// of a runner that substitutes a template.
var SubstitutionTooLargeEntry = failSubstitutionTooLarge

func errUnknownRunner(name string) *failure.Error { return failUnknownRunner.New(name) }

// Canceled is ERR:<runner>:canceled:<cause>, for a call whose context ended.
func Canceled(runner string, cause error) *failure.Error {
	return failCanceled.New(runner, cause.Error())
}

// ResultTooLarge is ERR:<runner>:result_too_large:<cap>, for a result over the
// runner's cap. A runner refuses such a result whole rather than cutting it: a
// truncated document would pass as a result and break whatever parses it.
func ResultTooLarge(runner string, limit int64) *failure.Error {
	return failResultTooLarge.New(runner, strconv.FormatInt(limit, 10))
}

func errSubstitutionTooLarge(limit int) *failure.Error {
	return failSubstitutionTooLarge.New(strconv.Itoa(limit))
}

func errAuthUnknownPrefix(prefix string) *failure.Error { return failAuthUnknownPrefix.New(prefix) }

func errAuthBadSpec(prefix, msg string) *failure.Error { return failAuthBadSpec.New(prefix, msg) }

var (
	// ErrEnvNotAllowed: the auth column names an environment variable outside the
	// operator's allow-list (SecretEnv), or one of capdir's own (ReservedEnv).
	ErrEnvNotAllowed = errors.New("runner: auth: environment variable not allowed")
	// ErrBadSecretEnv: a pattern of the allow-list is malformed.
	ErrBadSecretEnv = errors.New("runner: bad secret-env pattern")
)

func errEnvNotAllowed(name string) *failure.Error { return failEnvNotAllowed.New(name) }
