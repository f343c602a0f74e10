// Package runner is the runner contract and what every runner shares: the [Call]
// a runner gets and the [Outcome] it reports, the name-to-runner map, argument
// splitting and escape-aware substitution, credential application and redaction,
// and the ERR: literals common to all runners. One sub-package per runner
// implements it (fnrunner, httprunner, natsrunner, flowrunner, agentrunner), and
// every one of them runs the conformance suite in runnertest from its own tests.
//
// # Arguments
//
// The invocation body is one string split on "|" (SplitArgs). Substitute expands
// $1..$N, $N+ (the rest, pipes restored), $$ forms (no escaping) and $NAME (from
// vars: $PREV and flow bindings; unresolved names stay literal), escaping each value
// for the position it lands in: path or query of a URL, inside or outside a JSON
// string literal, or not at all.
//
// Substitution is bounded while it is built: past its limit (a runner's
// MaxSubstitutionBytes, DefaultMaxSubstitutionBytes by default) it stops with
// ERR:substitution_too_large:<limit>, so a template repeating $1 over a large body
// cannot turn one call into gigabytes of memory.
//
// # Credentials
//
// The auth column names an environment variable and how to apply it (ApplyAuth):
// headers:{"k":"$ENV"}, bearer:ENV, basic:ENV, query:param=ENV, and oauth:ENV, where
// ENV holds an OAuth 2.0 access token (obtained and refreshed outside capdir) that is
// sent as "Authorization: Bearer <token>". A missing or empty variable applies no
// credential; it is not an error. Credential.Tag gives a 4-hex-digit HMAC tag of the
// applied values for noticing rotation without storing anything recoverable.
//
// Rows read only the variables the operator allows (SecretEnv: names, PREFIX*,
// *SUFFIX or *; DefaultSecretEnv unless set), never capdir's own (ReservedEnv:
// CAPDIR_* and what the process reads itself). SecretEnv.Guard wraps the Env every
// runner and the breaker's credential tag read: a name outside the list resolves to
// nothing and ApplyAuth fails with ERR:auth:env_not_allowed:<NAME>. AuthVariables
// lists the names a spec reads, for the write path's check.
//
// # The contract
//
// A Runner never returns a Go error; every failure is an Outcome whose Result is the
// literal "ERR:..." text (each family built in one errors.go) and whose Err matches
// a sentinel with errors.Is. Run returns promptly once its context ends, with
// ERR:<runner>:canceled:<reason>, and never puts a secret value in the Outcome.
// Runners maps a runner name to its Runner; the row's runner column overrides its
// type. Shape mode (Call.Shape) builds everything and sends nothing. A result over
// the runner's cap (DefaultMaxResultBytes unless configured) is refused whole with
// ERR:<runner>:result_too_large:<cap> (the http runner keeps its
// ERR:http:response_too_large:<cap>), matching ErrResultTooLarge, never cut.
//
// # Conformance
//
// Every runner must run the conformance suite, runnertest.Run, from its own tests,
// with a Harness giving its constructor and one row per scenario; a new runner is
// not done until it passes under -race. The suite checks what this contract
// promises of every runner: cancellation, the result cap, secrets never in any
// field of an Outcome (even when the target echoes them, in shape mode too), ERR:
// literals matching sentinels, bounded substitution, and concurrent use.
//
// # Caveats
//
//   - Only the last argument of a row may contain "|", and only when the template
//     reads it with $N+.
//   - In JSON mode a placeholder outside a string literal is inserted raw, by design
//     ($2+ passes a JSON document through); a row that wants a quoted value must put
//     the placeholder inside quotes: {"q":"$1"}, not {"q":$1}.
//   - Secret scrubbing is by value: a one-character secret would redact every
//     occurrence of that character in results. Use real secrets.
package runner
