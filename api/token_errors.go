package api

import (
	"errors"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/eventlog/wire"
)

// The answers about credentials and capability tokens, in one place. Their statuses
// are the error table's (status.go): a token refusal is a *TokenRefusedError, whose
// kind follows its receipt status:
//
//	REFUSED_TOKEN              401  no token, or one that does not hold (token:…)
//	REFUSED_SCOPE              403  scope:<KEY>, risk_ceiling:…, body_fixed:…
//	REFUSED_CONTRACT_CHANGED   409  contract_changed:<pinned>!=<current>
//	REFUSED_PAYLOAD_TOO_LARGE  413  payload_ceiling:<size>><max> (or the deployment's)

// tokenRefusalFix says what to do about each refusal.
var tokenRefusalFix = map[string]string{
	wire.StatusRefusedToken: "present a capability token this deployment minted, not expired and not revoked, as Authorization: Bearer <token>; " +
		"the owner mints one with POST /api/tokens (capdir token mint)",
	wire.StatusRefusedScope:           "the token does not permit this call (its scope, risk ceiling or fixed body): ask the owner for a token that does",
	wire.StatusRefusedContractChanged: "the row's contract changed since the token was pinned to it: ask the owner for a token pinned to the current contract",
	wire.StatusRefusedPayloadTooLarge: "send a smaller body: the token, or the deployment, sets a payload ceiling",
}

// tokenRefusedAnswer is the body of a token refusal:
// {"error":"<reason>","how_to_fix":…,"ran":false,"status":…}.
func tokenRefusedAnswer(reason, status string) map[string]any {
	return map[string]any{"error": reason, "how_to_fix": tokenRefusalFix[status], "ran": false, "status": status}
}

var (
	// errOwnerOnly is an owner route's 401 to a caller that presented a token.
	errOwnerOnly = &credentialError{[]byte(`{"error":"unauthorized","how_to_fix":"this route needs the owner key in the x-terminal-key header; ` +
		`a capability token (Authorization: Bearer) may only call and read the rows in its scope: /api/dispatch (a call, format=, registry=1, ask=, and receipt= for its own calls) and /mcp"}`)}
	// errNoDispatchCredential is a dispatch's 401 without a credential that holds.
	errNoDispatchCredential = &credentialError{[]byte(`{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header, ` +
		`or a capability token as Authorization: Bearer <token>"}`)}
	// errMalformedAuthorization is a dispatch's 401 to an Authorization header that
	// is not one bearer token.
	errMalformedAuthorization = &credentialError{[]byte(`{"error":"token:malformed","how_to_fix":"send Authorization: Bearer <token>, ` +
		`the token exactly as POST /api/tokens returned it"}`)}
)

// bothCredentialsMessage is a dispatch's 400 to a caller that sent both.
const bothCredentialsMessage = "send either the owner key (x-terminal-key) or a capability token (Authorization: Bearer), not both"

// throttledBody is the 429 to an address that sent too many wrong owner keys:
// {"error":"too_many_wrong_keys","how_to_fix":…} (the wait is in Retry-After too).
func throttledBody(err error) any {
	te := &ownerkey.ThrottledError{}
	errors.As(err, &te)
	return te.Body()
}
