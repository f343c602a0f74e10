package gate

import (
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// The token checks, in the order check.go lists them. A request capdir attests as
// the owner's (Input.Owner) passes every one. Any other request needs a token:
// credential verifies it and records its claims in the Admission, and each later
// check refuses what the claims do not permit. The order follows the trust
// boundary: who the caller is (signature, expiry, revocation, audience, subject),
// then what it may touch (scope) before anything that depends on which rows exist,
// then the limits that depend on the row (pin, risk) and on the call (body, size).

// credential refuses a request with neither the owner's attestation nor a token,
// and a token whose signature, algorithm, key id, claims or times do not hold.
// The verifier's cache makes a token presented again cost a hash and a lookup.
func credential(g *Gate, in *Input, a *Admission) *Refusal {
	if in.Owner {
		return nil
	}
	if in.Req.Token == "" {
		return refuseToken(token.ErrRequired)
	}
	c, err := g.cfg.Tokens.Authenticate(in.Req.Token, g.cfg.Clock())
	if err != nil {
		return refuseToken(err)
	}
	a.Token = &c
	return nil
}

// notRevoked refuses a token the owner revoked, and one whose revocation could
// not be looked up.
func notRevoked(g *Gate, in *Input, a *Admission) *Refusal {
	if a.Token == nil {
		return nil
	}
	if in.RevokedErr != nil {
		return refuseRevocationUnknown(in.RevokedErr)
	}
	if g.cfg.Revoked(a.Token.ID) {
		return refuseToken(token.ErrRevoked)
	}
	return nil
}

// audience refuses a token minted for another deployment.
func audience(g *Gate, _ *Input, a *Admission) *Refusal {
	if a.Token == nil {
		return nil
	}
	if err := g.cfg.Tokens.CheckAudience(a.Token); err != nil {
		return refuseToken(err)
	}
	return nil
}

// notOwnerSubject refuses a token whose subject is the owner: a token is never
// the owner, whoever minted it.
func notOwnerSubject(_ *Gate, _ *Input, a *Admission) *Refusal {
	if a.Token != nil && token.IsOwnerSubject(a.Token.Subject) {
		return refuseToken(token.ErrOwnerSubject)
	}
	return nil
}

// inScope refuses a key the token's scope does not name, unless the key's row is
// an enabled row in a category the scope names. A key with no row is refused
// alike when the scope does not name it, so a token holder cannot tell a row
// outside its scope from no row; and a disabled row, which discovery hides from
// every token (a 404 like no row), is outside a category: a token reaching it
// only through its category cannot tell it from no row either (the owner, and a
// token naming the key, get ERR:disabled:<KEY> from rowEnabled). A failure to
// read the row says nothing about the key either: it is left to rowExists to
// report.
func inScope(_ *Gate, in *Input, a *Admission) *Refusal {
	t := a.Token
	if t == nil || t.Scope.HasKey(in.Req.Key) {
		return nil
	}
	if in.RowErr != nil && !in.NotFound {
		return nil
	}
	if in.NotFound || in.Row == nil || in.Row.Enabled == 0 || !t.Scope.HasCategory(in.Row.Category) {
		return refuseScope(in.Req.Key)
	}
	return nil
}

// suggestWithin keeps the did_you_mean suggestions a caller may see: all of them
// for the owner; for a token holder only keys its scope names (a suggestion must
// not reveal a row outside the scope).
func suggestWithin(t *token.Claims, suggestions []string) []string {
	if t == nil {
		return suggestions
	}
	var out []string
	for _, k := range suggestions {
		if t.Scope.HasKey(k) {
			out = append(out, k)
		}
	}
	return out
}

// contractPin refuses a pinned token when the row's contract fingerprint is no
// longer the pinned one.
func contractPin(_ *Gate, _ *Input, a *Admission) *Refusal {
	if a.Token != nil && a.Token.Pin != "" && a.Token.Pin != a.Fingerprint {
		return refuseContractChanged(a.Token.Pin, a.Fingerprint)
	}
	return nil
}

// riskCeiling refuses a sensitive row to a token whose ceiling is not high.
func riskCeiling(_ *Gate, _ *Input, a *Admission) *Refusal {
	if a.Token != nil && a.Row.Sensitive == 1 && a.Token.Risk != token.RiskHigh {
		return refuseRiskCeiling(a.Token.Risk, token.RiskHigh)
	}
	return nil
}

// fixedBody refuses a body other than the token's fixed body, and any arguments
// object: a fixed body is one pipe body.
func fixedBody(_ *Gate, in *Input, a *Admission) *Refusal {
	if a.Token != nil && a.Token.Body != nil && (*a.Token.Body != in.Req.Body || sentArgs(in.Req) != nil) {
		return refuseBodyFixed(*a.Token.Body, sentText(in.Req))
	}
	return nil
}

// tokenPayload refuses a body over the token's own payload ceiling.
func tokenPayload(_ *Gate, in *Input, a *Admission) *Refusal {
	if a.Token != nil && a.Token.MaxPayload > 0 && sentLen(in.Req) > a.Token.MaxPayload {
		return refuseTokenPayload(sentLen(in.Req), a.Token.MaxPayload)
	}
	return nil
}

// callerChecks is how many checks, from the first, are about who the caller is
// (credential, notRevoked, audience, notOwnerSubject): they read no row.
const callerChecks = 4

// accessChecks is how many checks, from the first, decide whether this caller
// may have this row's answer at all: who the caller is, its scope, the row, the
// contract pin, the risk ceiling, the fixed body and the payload ceilings. The
// checks after them (an enabled row, the arguments, the breaker, the watcher)
// are about running the call now, not about who may read its answer.
const accessChecks = 11

// Access runs the checks of who the caller is and what it may call
// (checks[:accessChecks]) on in, as the gate runs them for a new call, and
// returns the first refusal, nil when they pass. It is for an answer a caller
// gets without a run, the receipt of an earlier request it repeats (an
// Idempotency-Key sent again, a bus client's chosen invocation id): that answer
// is the caller's only if it could make the call itself now, with the credential
// it presents now (not revoked, in scope, within its pin and risk ceiling).
func (g *Gate) Access(in *Input) *Refusal {
	var a Admission
	for _, c := range checks[:accessChecks] {
		if r := c(g, in, &a); r != nil {
			return r
		}
	}
	return nil
}

// OfTheArguments reports whether r refuses the arguments sent (a fixed body, a
// payload ceiling): its literal is made of their fingerprint or size, so it is
// no answer for a caller that did not send them itself.
func (r *Refusal) OfTheArguments() bool { return r.quotesInput }

// Caller runs the checks of who the caller is on a raw token, as the gate would:
// signature, algorithm, key id, claims and times, revocation (as this process's
// projection has folded it), audience, owner subject. An entry point calls it to
// refuse a token that does not hold before it appends anything; the worker's gate
// checks the request again, whatever the entry point found. It returns the
// token's claims, or the refusal a receipt would carry. The claims share memory
// with the verifier's cache: read them, do not modify them.
func (g *Gate) Caller(raw string) (*token.Claims, *Refusal) {
	in := Input{Req: &wire.InvocationRequest{Token: raw}}
	var a Admission
	for _, c := range checks[:callerChecks] {
		if r := c(g, &in, &a); r != nil {
			return a.Token, r
		}
	}
	return a.Token, nil
}
