package eventlog

import (
	"strings"
	"time"

	"github.com/capdir/capdir/contract"
)

// Directory mutation actions.
const (
	ActionCreate  = "create"
	ActionReplace = "replace"
	ActionPatch   = "patch"
	ActionDelete  = "delete"
)

// DirectoryMutation is the data of a DIRECTORY_MUTATE event: the action, the key and
// the row after the write (nil after a delete).
type DirectoryMutation struct {
	Action string        `json:"action"`
	Key    string        `json:"key"`
	Row    *contract.Row `json:"row,omitempty"`
}

// InvocationPrefix starts every invocation id: "inv_" and a lower-case ULID.
const InvocationPrefix = "inv_"

// RequestInvocationID is the invocation id of a request that carries none (a bus
// client may leave it empty): InvocationPrefix and its event id in lower case.
func RequestInvocationID(eventID string) string { return InvocationPrefix + strings.ToLower(eventID) }

// InvocationRequest is the data of an INVOCATION_REQUESTED event.
type InvocationRequest struct {
	InvocationID string `json:"invocation_id"` // inv_<ULID>
	Trace        string `json:"trace"`         // t_<...>
	Key          string `json:"key"`
	Body         string `json:"body"`
	Shape        bool   `json:"shape,omitempty"`
	// Credential is the caller's attestation: "owner:terminal-key" when the facade
	// checked the owner key, "nats:<name>" for a bus client. Never a secret.
	Credential string `json:"credential"`
	// DirSeq is the control-stream sequence the requesting node had projected: a
	// worker on another node waits until it has applied as much before it reads the
	// row, so a row is callable the moment its write returns, on every node.
	DirSeq uint64 `json:"dir_seq,omitempty"`
}

// Fingerprints are SHA-256 hex digests carried by every receipt.
type Fingerprints struct {
	Input    string `json:"input"`
	Output   string `json:"output"`
	Contract string `json:"contract"`
}

// ReceiptSummary is the part of a receipt anyone may see: what ran, when, how it
// ended, and the fingerprints. It holds no arguments, no result and nothing about
// credentials; it is the public, keyless view of a receipt.
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
	// Extra carries structured output that is not a string: shape mode's request
	// preview, or the unknown_key refusal with did_you_mean.
	Extra map[string]any `json:"extra,omitempty"`
	// Breaker bookkeeping: the credential tag and breaker generation the call ran
	// under, so replaying receipts rebuilds every breaker.
	CredTag           string `json:"cred_tag,omitempty"`
	BreakerGeneration uint64 `json:"breaker_generation"`
	BreakerKind       string `json:"breaker_kind,omitempty"`
	Worker            string `json:"worker,omitempty"`
}

// BreakerReset is the data of a BREAKER_RESET event.
type BreakerReset struct {
	Key string `json:"key"`
}
