package token

import (
	"errors"

	"github.com/capdir/capdir/contract/failure"
)

// Refusals of a presented token. Reason gives the literal a caller sees for each.
var (
	// ErrRequired: the request carries neither the owner's attestation nor a token.
	ErrRequired = errors.New("token: a capability token is required")
	// ErrMalformed: not a compact JWS, too long, or its claims are not capdir's.
	ErrMalformed = errors.New("token: malformed")
	// ErrAlgorithm: the header names an algorithm other than ES256 (none, HS256, …).
	ErrAlgorithm = errors.New("token: algorithm is not ES256")
	// ErrUnknownKey: the header's kid names no key this verifier holds.
	ErrUnknownKey = errors.New("token: signed by an unknown key")
	// ErrBadSignature: the signature does not verify under the key kid names.
	ErrBadSignature = errors.New("token: bad signature")
	// ErrExpired: now is past exp (plus the leeway).
	ErrExpired = errors.New("token: expired")
	// ErrNotYetValid: now is before iat (less the leeway).
	ErrNotYetValid = errors.New("token: not yet valid")
	// ErrAudience: the token was minted for another deployment (see AudienceError).
	ErrAudience = errors.New("token: wrong audience")
	// ErrRevoked: the owner revoked the token (a TOKEN_REVOKED event).
	ErrRevoked = errors.New("token: revoked")
	// ErrOwnerSubject: a token's subject may never be the owner.
	ErrOwnerSubject = errors.New("token: subject may not be the owner")
)

// Refusals of a mint request or of a configuration.
var (
	// ErrEmptyScope: a token must name at least one key or category.
	ErrEmptyScope = errors.New("token: scope must name at least one key or category")
	// ErrBadScope: a scope entry is not a valid key or category.
	ErrBadScope = errors.New("token: bad scope entry")
	// ErrBadRisk: the risk ceiling is neither "low" nor "high".
	ErrBadRisk = errors.New(`token: risk must be "low" or "high"`)
	// ErrBadTTL: the lifetime is negative or under a second.
	ErrBadTTL = errors.New("token: ttl must be at least 1s")
	// ErrTTLTooLong: the lifetime is over the minter's maximum.
	ErrTTLTooLong = errors.New("token: ttl over the maximum")
	// ErrBadSubject: the subject is empty, too long, or has characters outside
	// A-Z a-z 0-9 . _ : @ / -.
	ErrBadSubject = errors.New("token: bad subject")
	// ErrBadPin: the pin is not a contract fingerprint (64 lower-case hex digits),
	// or the scope is not the one key it pins.
	ErrBadPin = errors.New("token: bad pin")
	// ErrBadMaxPayload: max_payload is negative, or smaller than the fixed body.
	ErrBadMaxPayload = errors.New("token: bad max_payload")
	// ErrTooLarge: the token would be longer than MaxLen.
	ErrTooLarge = errors.New("token: too large")
	// ErrKeyFileMode: the key file is readable or writable by group or others.
	ErrKeyFileMode = errors.New("token: key file is accessible to group or others")
	// ErrBadKey: a key is not an ECDSA P-256 key, or a key file holds none.
	ErrBadKey = errors.New("token: not an ECDSA P-256 key")
	// ErrConfig: a Minter or Verifier configuration is invalid.
	ErrConfig = errors.New("token: invalid configuration")
)

// AudienceError is ErrAudience with the audience the token carries.
type AudienceError struct{ Got string }

func (e *AudienceError) Error() string { return ErrAudience.Error() + ": " + e.Got }

// Unwrap makes errors.Is(err, ErrAudience) hold.
func (e *AudienceError) Unwrap() error { return ErrAudience }

// reasons are the literal refusals, in one place. Checked in order with errors.Is.
var reasons = failure.Table{
	{Literal: "token:required", Kind: ErrRequired, Fault: failure.FaultCall,
		Cause: "the call carries neither the owner key nor a capability token", Fix: "send a token in Authorization: Bearer, or the owner key"},
	{Literal: "token:malformed", Kind: ErrMalformed, Fault: failure.FaultCall,
		Cause: "the token is not a compact JWS of capdir's claims", Fix: "send the token exactly as it was minted"},
	{Literal: "token:alg_not_es256", Kind: ErrAlgorithm, Fault: failure.FaultCall,
		Cause: "the token is signed with an algorithm other than ES256", Fix: "send a token capdir minted"},
	{Literal: "token:unknown_kid", Kind: ErrUnknownKey, Fault: failure.FaultCall,
		Cause: "the token is signed by a key this node does not hold", Fix: "ask the owner for a token minted by this deployment"},
	{Literal: "token:bad_signature", Kind: ErrBadSignature, Fault: failure.FaultCall,
		Cause: "the signature does not verify", Fix: "send the token exactly as it was minted"},
	{Literal: "token:expired", Kind: ErrExpired, Fault: failure.FaultCall,
		Cause: "the token is past its expiry", Fix: "ask the owner for a new token"},
	{Literal: "token:not_yet_valid", Kind: ErrNotYetValid, Fault: failure.FaultCall,
		Cause: "the token's issue time is in the future", Fix: "check the clocks; call again later"},
	{Literal: "token:revoked", Kind: ErrRevoked, Fault: failure.FaultCall,
		Cause: "the owner revoked the token", Fix: "ask the owner for a new token"},
	{Literal: "token:owner_subject", Kind: ErrOwnerSubject, Fault: failure.FaultCall,
		Cause: "the token's subject is the owner, which no token may be", Fix: "the owner mints tokens for other subjects"},
}

var (
	failAudience = failure.Entry{Literal: "token:audience:<got>", Kind: ErrAudience, Fault: failure.FaultCall,
		Cause: "the token was minted for another deployment", Fix: "send a token minted by this deployment"}
	failInvalid = failure.Entry{Literal: "token:invalid", Fault: failure.FaultCall,
		Cause: "the token does not hold for a reason of no other kind", Fix: "ask the owner for a new token"}
)

// Failures is the table of the literal refusals of a presented token.
var Failures = append(append(failure.Table{}, reasons...), failAudience, failInvalid)

// Reason is the literal refusal a caller sees for a token error: "token:expired",
// "token:audience:<got>", and so on. An error that is none of the token refusals
// gives "token:invalid".
func Reason(err error) string {
	var ae *AudienceError
	if errors.As(err, &ae) {
		return failAudience.Fill(ae.Got)
	}
	for _, r := range reasons {
		if errors.Is(err, r.Kind) {
			return r.Literal
		}
	}
	return failInvalid.Literal
}
