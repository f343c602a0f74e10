// Package runnertest is the conformance suite of the runner contract: one exported
// [Run] that every runner calls from its own tests with a [Harness], the way every
// pub/sub implementation runs one shared suite. It checks what the contract in
// package runner promises of every runner, whatever it runs:
//
//   - cancellation: a cancelled or expiring context returns promptly with
//     ERR:<runner>:canceled:<reason> (or the runner's own timeout literal), and an
//     Err matching runner.ErrCanceled (or the runner's timeout sentinel);
//   - the result cap: a result over the runner's cap is refused whole with its
//     literal and runner.ErrResultTooLarge, never cut; one at the cap passes;
//   - secrets: the value of the variable a row's auth names never appears in any
//     field of the Outcome, in any encoding, even when the target echoes all it
//     received, in normal and in shape mode;
//   - error literals: every failure's Result starts "ERR:", is its Err's text, and
//     its Err matches a sentinel with errors.Is; a success has no Err;
//   - the failure table: the runner exports one (runner.Documented); every
//     failure's Result is an instance of an entry, and every entry is met by a
//     row of Failures, a cancelled call, a result over the cap or an amplified
//     template, or names the test that drives it (Elsewhere);
//   - substitution: a template repeating $1 over a 1 MB body is refused with
//     ERR:substitution_too_large:<limit> at once, allocating little beyond the limit;
//   - concurrency: Run is safe for concurrent use (run the suite under -race).
package runnertest

import (
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// The credential the suite puts in the environment of every runner it builds.
// The value holds characters that every wire encoding changes (space, '/', '+',
// '&', '"', '=', ':'), and Marker, which no encoding changes, so that a leak in
// any encoding is caught.
const (
	SecretVar   = "RUNNERTEST_SECRET"
	SecretValue = `rt S3CRET/v+&"=:x`
	Marker      = "S3CRET"
)

// Config is what the suite asks of a runner it builds. Zero fields mean the
// runner's defaults.
type Config struct {
	// Env is the credential environment: SecretVar set to SecretValue.
	Env runner.Env
	// Limits are the result cap and the substitution limit (Timeout is unset).
	runner.Limits
}

// Harness is what a runner supplies to Run: how to build it, and one row for each
// scenario. Rows are shared by subtests and concurrent calls; the suite never
// modifies them.
type Harness struct {
	// Name is the runner's name as its literals spell it: ERR:<Name>:canceled:...
	Name string
	// New returns the runner under test configured with cfg. It may register
	// cleanups on t.
	New func(t testing.TB, cfg Config) runner.Runner

	// Echo succeeds, and its Result contains each argument of the body verbatim
	// (the suite's arguments are made of letters, digits and '-').
	Echo *contract.Row
	// Block reaches a target that does not answer until the call's context ends.
	Block *contract.Row
	// Large reaches a target that answers with n bytes 'x', n being the first
	// argument in decimal.
	Large *contract.Row
	// Secrets are rows whose auth column names SecretVar (one per auth form the
	// runner applies, or one whose auth the runner ignores) and whose target echoes
	// everything it received; each succeeds.
	Secrets []*contract.Row
	// Amplify are rows with a template referencing $1 a thousand times, one row per
	// template the runner substitutes (an http row's target and body).
	Amplify []*contract.Row
	// NoTemplate says the runner substitutes no template at all (the agent runner
	// sends the body verbatim as the user message): Amplify is then empty and the
	// substitution test is skipped. Every other runner leaves it false.
	NoTemplate bool
	// Failures are rows that fail, each in its own way, with the body "x".
	Failures []*contract.Row

	// Elsewhere are the entries of the runner's failure table that no row of
	// Failures reaches (a failure that needs an upstream to misbehave mid-call,
	// a model's tool call): each entry's literal, and the test of the runner's
	// own package that drives the runner into it.
	Elsewhere map[string]string

	// Sentinels are the runner package's sentinel errors. Every failure's Err
	// matches one of them or one of the runner contract's.
	Sentinels []error
	// Timeout and TimeoutPrefix are the runner's own timeout sentinel and literal
	// prefix, when it has one: a call whose context expires may report them rather
	// than the cancellation.
	Timeout       error
	TimeoutPrefix string
	// TooLarge is the Result refusing a result over limit;
	// runner.ResultTooLarge(Name, limit).Literal when nil.
	TooLarge func(limit int64) string
}

// contractSentinels are the runner contract's own sentinels.
var contractSentinels = []error{
	runner.ErrCanceled, runner.ErrResultTooLarge, runner.ErrSubstitutionTooLarge,
	runner.ErrAuthUnknownPrefix, runner.ErrAuthBadSpec, runner.ErrUnknownRunner,
}

func (h Harness) tooLarge(limit int64) string {
	if h.TooLarge != nil {
		return h.TooLarge(limit)
	}
	return runner.ResultTooLarge(h.Name, limit).Literal
}

// env is the credential environment the suite gives every runner.
func env() runner.Env { return runner.MapEnv(map[string]string{SecretVar: SecretValue}) }
