package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
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

// Fingerprints are SHA-256 hex digests carried by every receipt.
type Fingerprints struct {
	Input    string `json:"input"`
	Output   string `json:"output"`
	Contract string `json:"contract"`
}

// ReceiptSummary is what ran, when, how it ended, and the fingerprints. It holds no
// arguments, no result and nothing about credentials; the public, keyless view of
// a receipt (PublicReceipt) is this without the input and output fingerprints,
// which would let a reader test a guess about them, and without the actor and
// the trace, which name the caller.
type ReceiptSummary struct {
	InvocationID string       `json:"invocation_id"`
	Trace        string       `json:"trace"`
	Actor        string       `json:"actor"`
	Key          string       `json:"key"`
	Type         string       `json:"type,omitempty"`
	Runner       string       `json:"runner,omitempty"`
	OK           bool         `json:"ok"`
	Ran          bool         `json:"ran"`
	Material     bool         `json:"material"`
	Status       string       `json:"status"`
	Upstream     int          `json:"upstream_status,omitempty"`
	StartedAt    time.Time    `json:"started_at"`
	FinishedAt   time.Time    `json:"finished_at"`
	DurationMS   float64      `json:"duration_ms"`
	CostUSD      float64      `json:"cost_usd"`
	Fingerprints Fingerprints `json:"fingerprints"`
}

// Receipt is the data of a RECEIPT event, written by the dispatcher only: the
// summary plus what only the owner may see.
type Receipt struct {
	ReceiptSummary
	// Body and Result are the owner's view only.
	Body   string `json:"body"`
	Result string `json:"result"`
	// HMAC holds the keyed fingerprints of the whole body and result, and their
	// salt: the public view shows them without it.
	HMAC *FingerprintHMAC `json:"fingerprint_hmac,omitempty"`
	// Extra carries structured output that is not a string: shape mode's request
	// preview, or the unknown_key refusal with did_you_mean.
	Extra map[string]any `json:"extra,omitempty"`
	// Parent is the invocation id of the call this one is a step of (a flow's
	// step, an agent's tool call); empty for a top-level call. Children are the
	// invocation ids of this call's own steps, in the order they were made.
	Parent   string   `json:"parent,omitempty"`
	Children []string `json:"children,omitempty"`
	// PromptTokens and CompletionTokens are the model tokens the call used (agent
	// rows), summed over its model requests; the tokens of its steps are on their
	// own receipts.
	PromptTokens     int64 `json:"prompt_tokens,omitempty"`
	CompletionTokens int64 `json:"completion_tokens,omitempty"`
	// Breaker bookkeeping: the credential tag and breaker generation the call ran
	// under, so replaying receipts rebuilds every breaker.
	CredTag           string `json:"cred_tag,omitempty"`
	BreakerGeneration uint64 `json:"breaker_generation"`
	BreakerKind       string `json:"breaker_kind,omitempty"`
	Worker            string `json:"worker,omitempty"`
}

// Fingerprint is the hex SHA-256 of s: a receipt's input and output
// fingerprints, and the body an approval is granted for.
func Fingerprint(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
