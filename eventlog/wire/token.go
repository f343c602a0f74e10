package wire

import "strings"

// Who a request is from. capdir attests the owner's requests itself; every other
// caller presents a capability token (InvocationRequest.Token), which the
// dispatcher's gate verifies.
const (
	// OwnerActor is the credential capdir writes on a request it appends for the
	// owner (the HTTP facade checked the owner key). It is believed only on a
	// request subject capdir alone may publish to: see OwnerAttested.
	OwnerActor = "owner:terminal-key"
	// BearerCredential is the credential capdir writes on a request it appends for
	// a caller that presented a capability token over HTTP (Authorization: Bearer).
	// It claims nothing: the token is what the gate checks.
	BearerCredential = "http:bearer"
	// MCPBearerCredential is the credential capdir writes on a request it appends
	// for an MCP client that presented a capability token (api/mcp). It claims
	// nothing either: the token is what the gate checks.
	MCPBearerCredential = "mcp:bearer"
	// tokenActorPrefix starts the receipt actor of a token holder: token:<sub>.
	tokenActorPrefix = "token:"
)

// OwnerAttested reports whether a request on subject whose credential is
// credential is the owner's: it is on capdir's own request subject
// (RequestSubject, which only capdir's connection may publish to) and carries
// OwnerActor. A request on any other subject is never the owner's, whatever it
// claims.
func OwnerAttested(subject, credential string) bool {
	return credential == OwnerActor && strings.HasPrefix(subject, requestPrefix)
}

// BreakerCaller is who a call whose receipt names actor is to its row's breaker
// (breaker.Observation.Caller): "" for the owner (OwnerActor), whose own strikes
// open the row for everyone; the actor itself for any other caller. The gate's
// check and the projector's fold both read it here.
func BreakerCaller(actor string) string {
	if actor == OwnerActor {
		return ""
	}
	return actor
}

// TokenActor is the receipt actor of a request whose capability token names sub:
// "token:<sub>". The token itself is never copied into a receipt.
func TokenActor(sub string) string { return tokenActorPrefix + sub }

// TokenRevoked is the data of a TOKEN_REVOKED event, appended on TokenSubject(JTI)
// of the control stream.
type TokenRevoked struct {
	// JTI is the revoked token's id (its "jti" claim); ValidTokenID holds.
	JTI string `json:"jti"`
	// Exp is a time (Unix seconds) by which the token has expired, however it was
	// minted: past it (and the verifiers' leeway) the revocation need not be
	// remembered, since the token is refused as expired anyway.
	Exp int64 `json:"exp"`
}

// MaxTokenIDLen is the longest token id a revocation may name. capdir's minter
// makes 32 hex digits.
const MaxTokenIDLen = 64

// ValidTokenID reports whether jti can be revoked: 1 to MaxTokenIDLen characters
// of A-Z a-z 0-9 _ -, so that it is one safe subject token.
func ValidTokenID(jti string) bool { return len(jti) <= MaxTokenIDLen && ValidKey(jti) }

// TokenSubject is where the revocation of the token jti is appended: one subject
// per token, so a node can ask the log whether one token is revoked without
// reading the others.
func TokenSubject(jti string) string { return tokenPrefix + jti }

// TokenSubjects matches every token revocation.
const TokenSubjects = tokenPrefix + ">"
