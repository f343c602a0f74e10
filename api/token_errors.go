package api

import (
	"net/http"

	"github.com/capdir/capdir/eventlog/wire"
)

// The answers about credentials and capability tokens, in one place.

// tokenRefusalStatus is the HTTP status of a dispatch the gate refused for what the
// caller's token does not permit, 0 for any other receipt status:
//
//	REFUSED_TOKEN              401  no token, or one that does not hold (token:…)
//	REFUSED_SCOPE              403  scope:<KEY>, risk_ceiling:…, body_fixed:…
//	REFUSED_CONTRACT_CHANGED   409  contract_changed:<pinned>!=<current>
//	REFUSED_PAYLOAD_TOO_LARGE  413  payload_ceiling:<size>><max> (or the deployment's)
func tokenRefusalStatus(status string) int {
	switch status {
	case wire.StatusRefusedToken:
		return http.StatusUnauthorized
	case wire.StatusRefusedScope:
		return http.StatusForbidden
	case wire.StatusRefusedContractChanged:
		return http.StatusConflict
	case wire.StatusRefusedPayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return 0
}

// tokenRefusalFix says what to do about each refusal.
var tokenRefusalFix = map[string]string{
	wire.StatusRefusedToken: "present a capability token this deployment minted, not expired and not revoked, as Authorization: Bearer <token>; " +
		"the owner mints one with POST /api/tokens (capdir token mint)",
	wire.StatusRefusedScope:           "the token does not permit this call (its scope, risk ceiling or fixed body): ask the owner for a token that does",
	wire.StatusRefusedContractChanged: "the row's contract changed since the token was pinned to it: ask the owner for a token pinned to the current contract",
	wire.StatusRefusedPayloadTooLarge: "send a smaller body: the token, or the deployment, sets a payload ceiling",
}

// tokenRefusedAnswer is the body of a refusal the entry point found itself:
// {"error":"<reason>","how_to_fix":…,"ran":false,"status":…}. Nothing was appended.
func tokenRefusedAnswer(reason, status string) map[string]any {
	return map[string]any{"error": reason, "how_to_fix": tokenRefusalFix[status], "ran": false, "status": status}
}

// tokenRefusedReceipt is the body of a dispatch the gate refused, with its
// receipt's invocation id and trace: the literal reason in "error".
func tokenRefusedReceipt(rc *wire.Receipt) map[string]any {
	m := tokenRefusedAnswer(rc.Result, rc.Status)
	m["invocation_id"], m["trace"] = rc.InvocationID, rc.Trace
	return m
}

var (
	// ownerOnlyBody is an owner route's 401 to a caller that presented a token.
	ownerOnlyBody = []byte(`{"error":"unauthorized","how_to_fix":"this route needs the owner key in the x-terminal-key header; ` +
		`a capability token (Authorization: Bearer) may only dispatch: POST /api/dispatch or GET /api/dispatch?key="}`)
	// noDispatchCredentialBody is a dispatch's 401 without a credential that holds.
	noDispatchCredentialBody = []byte(`{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header, ` +
		`or a capability token as Authorization: Bearer <token>"}`)
	// malformedAuthorizationBody is a dispatch's 401 to an Authorization header
	// that is not one bearer token.
	malformedAuthorizationBody = []byte(`{"error":"token:malformed","how_to_fix":"send Authorization: Bearer <token>, ` +
		`the token exactly as POST /api/tokens returned it"}`)
	// bothCredentialsBody is a dispatch's 400 to a caller that sent both.
	bothCredentialsBody = []byte(`{"error":"send either the owner key (x-terminal-key) or a capability token (Authorization: Bearer), not both"}`)
)
