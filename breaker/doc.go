// Package breaker is the per-row auth breaker: after Threshold (default 8) consecutive
// upstream 401/403 responses a row is refused with
//
//	ERR:breaker_open:<KEY> — 8 consecutive auth failures; credential is dead until replaced.
//
// until the cooldown (default 1 hour) has passed, an owner resets it, or the credential
// the row names is replaced.
//
// # Fairness
//
// A caller other than the owner chooses its arguments, and arguments can make an
// upstream answer 403 with a credential that works (a path it may not read, a
// status endpoint told to answer 403). Such a caller must not deny the row to
// anyone else, while a dead credential must still open the row for everyone
// quickly. So strikes are counted per caller ([Observation.Caller]):
//
//   - the owner's own run of Threshold consecutive auth failures opens the row for
//     everyone (the owner is the one caller whose arguments are trusted);
//   - any other caller's own run of Threshold consecutive auth failures refuses that
//     caller alone, for the cooldown ([Decision.Caller]); the owner and every other
//     caller keep calling;
//   - when Quorum (default 3) callers are refused at once under the same
//     credential, the row opens for everyone, as the owner's run would open it;
//   - any answer other than 401/403 ends the run of the caller that got it, and the
//     owner's run too (the credential works); the owner's success does not end
//     another caller's run (it says nothing about that caller's arguments).
//
// A caller's refusal ends, as the row's does, when the cooldown has passed or the
// credential is replaced, and an owner reset ends every one of them. Its refusal is
// the same literal as the row's.
//
// The package is pure logic: no goroutines, no I/O, no clock. Every call takes the time
// it is about. A State is a plain value and the only way to change one is to fold an
// event into it with [Config.Observe] (a call's outcome) or [Config.Reset] (an owner
// reset). Folding the same events in the same order from the zero State always gives
// the same State, which is how capdir rebuilds every breaker by replaying its log.
//
// # Using it
//
// Before a call, [Config.Check] the projected State with the current time, the tag
// of the credential about to be used and the caller ("" for the owner). If the Decision is open, refuse with [Message]
// (or an [*OpenError]). Otherwise make the call, [Classify] the outcome, and append an
// [Observation] carrying the Decision's Generation, the same credential tag, and a
// time no earlier than the one given to Check. The projector folds it with Observe.
//
// # Generations
//
// Like sony/gobreaker v2, a State carries a Generation and an Observation carries the
// Generation that was current when its call started. An Observation whose Generation
// is not the State's (after lazy closing, below) is dropped: a result that arrives
// after the breaker opened, closed or was reset does not count. The rules:
//
//   - the zero State is generation 0;
//   - tripping (the Threshold-th consecutive strike) advances it by 1;
//   - closing an open State because its cooldown passed or its credential was
//     replaced ("lazy closing") advances it by 1;
//   - an owner Reset advances it by 2, whatever the state. Skipping one number keeps a
//     reset from ever landing on the generation a Check may already have handed out
//     for a lazy close of the same State, so a call started before the reset is
//     dropped even then.
//
// Closing is lazy: nothing happens when the cooldown expires. Check reports the State
// as it would be after lazy closing at its time and tag, and returns the Generation it
// would then have; Observe applies exactly the same lazy closing (at the
// Observation's At and CredTag) before looking at the Generation. A call allowed by a
// Check that saw the cooldown pass or the credential rotated therefore counts.
//
// # Credential tags
//
// A credential is known only by an opaque short tag the caller computes (a truncated
// keyed hash); the breaker never sees a credential value. The State remembers the tag
// of the current run of strikes (the tag in use when it tripped, once open). A
// non-empty tag that differs from the remembered one means the credential was
// replaced: an open breaker closes, and a closed breaker's run of strikes starts again
// from this strike, so 7 failures on the old credential and 1 on the new one never
// trip it. An empty tag (no credential configured) is never a replacement.
//
// # Caveats
//
//   - The tag is 16 bits, so a real rotation is missed with probability 1/65536. The
//     breaker then stays open until the cooldown passes or an owner resets it.
//   - A caller's run that has not reached the threshold is kept until that caller
//     gets another answer, the credential is replaced, the row opens, or an owner
//     resets it: a State holds at most one run per caller that has struck.
//   - Callers are told apart by the ids capdir gives them (token:<sub>,
//     nats:<client>): the owner decides how many there are by minting tokens and
//     naming bus clients, and a quorum of colluding token holders can still open a
//     row, as the owner's trust in them allows.
//   - The breaker is decided on a snapshot. Calls that Check while the 8th strike is
//     still in flight all see it closed and may each reach the upstream; their results
//     carry the pre-trip generation and are dropped once it has tripped. Refusal is
//     guaranteed only for calls that Check after the trip has been folded in.
//   - Observations must be folded in log order. Their At need not be monotonic, but an
//     Observation must not be stamped earlier than the Check that allowed its call (use
//     the same clock), or a Generation handed out for a lazy close will not match and
//     the result is dropped.
//   - Every State, Observation, Decision and Config is a value with no shared mutable
//     parts; all functions are safe for concurrent use. Serialising folds per key is
//     the caller's job (the event log does it by subject).
package breaker
