package wire

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/capdir/capdir/receipt"
)

// Receipt statuses.
const (
	// StatusProvenMaterialResult: the target ran and returned a non-error result.
	StatusProvenMaterialResult = "PROVEN_MATERIAL_RESULT"
	// StatusRanWithError: the target was reached and the result is an ERR: string
	// (for example an upstream 401).
	StatusRanWithError = "RAN_WITH_ERROR"
	// StatusFailedBeforeRun: the runner failed before reaching its target (bad
	// template, unknown function, unreachable host, bad auth spec, timeout).
	StatusFailedBeforeRun = "FAILED_BEFORE_RUN"
	// StatusShapeOnly: shape mode; the request was built and not sent.
	StatusShapeOnly = "SHAPE_ONLY"
	// StatusRefusedUnknownKey: no row has the key.
	StatusRefusedUnknownKey = "REFUSED_UNKNOWN_KEY"
	// StatusRefusedBreakerOpen: the row's auth breaker is open.
	StatusRefusedBreakerOpen = "REFUSED_BREAKER_OPEN"
	// StatusRefusedDisabled: the row has enabled = 0.
	StatusRefusedDisabled = "REFUSED_DISABLED"
	// StatusRefusedPayloadTooLarge: the body is over the payload ceiling.
	StatusRefusedPayloadTooLarge = "REFUSED_PAYLOAD_TOO_LARGE"
	// StatusRefusedBadRequest: the request event itself was unusable.
	StatusRefusedBadRequest = "REFUSED_BAD_REQUEST"
	// StatusRefusedToken: the caller has no credential that holds: neither the
	// owner's attestation nor a token, or a token that is malformed, not ES256,
	// signed by an unknown key, tampered with, expired, revoked, minted for
	// another audience, or naming the owner as its subject (HTTP 401).
	StatusRefusedToken = "REFUSED_TOKEN"
	// StatusRefusedScope: the token holds but does not permit this call: the key,
	// and the row's category, are outside its scope; the row is sensitive and the
	// token's risk ceiling is low; or the body is not the token's fixed body (HTTP 403).
	StatusRefusedScope = "REFUSED_SCOPE"
	// StatusRefusedContractChanged: the token pins a contract fingerprint and the
	// row's contract has changed since (HTTP 409): mint a token for the new one.
	StatusRefusedContractChanged = "REFUSED_CONTRACT_CHANGED"
	// StatusRefusedInput: the arguments do not satisfy the row's input_schema
	// (ERR:input:<what is wrong>); nothing ran (HTTP 400).
	StatusRefusedInput = "REFUSED_INPUT"
	// StatusRefusedApprovalDenied: the row is sensitive and the owner denied the
	// call its approval (HTTP 403).
	StatusRefusedApprovalDenied = "REFUSED_APPROVAL_DENIED"
	// StatusRefusedApprovalExpired: the row is sensitive and the owner did not
	// decide on the call before its approval expired (HTTP 410).
	StatusRefusedApprovalExpired = "REFUSED_APPROVAL_EXPIRED"
	// StatusRefusedApprovalRequired: the row is sensitive and the call is a step
	// (of a flow, or an agent's tool call) made for a caller other than the
	// owner. A step cannot wait for the owner's approval inside the call that
	// makes it, so it is refused, and the call that made it stops there; nothing
	// ran. The caller calls the sensitive row itself (that call waits for
	// approval), or the owner runs the flow.
	StatusRefusedApprovalRequired = "REFUSED_APPROVAL_REQUIRED"
	// StatusPendingApproval is never a receipt's: it is the answer to a call to a
	// sensitive row that waits for the owner's approval (HTTP 202). Its receipt
	// comes once the owner decides or the approval expires.
	StatusPendingApproval = "PENDING_APPROVAL"
)

// The receipt's shapes are declared in package receipt, which api/answer (what
// the Go client reads without NATS) names too; they are the same types here.
type (
	Fingerprints   = receipt.Fingerprints
	ReceiptSummary = receipt.ReceiptSummary
	Receipt        = receipt.Receipt
)

// Fingerprint is the hex SHA-256 of s: a receipt's input and output
// fingerprints, and the body an approval is granted for.
func Fingerprint(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
