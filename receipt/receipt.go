// Package receipt declares the shapes of a receipt, the data of a RECEIPT event:
// what ran, when, how it ended, its fingerprints, the owner's view and the public,
// keyless one. The log's wire types (eventlog/wire) and the HTTP answers
// (api/answer) both name these types, as aliases, so that neither depends on the
// other. It depends on the standard library only.
package receipt

import "time"

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
	// ContractSeq is the control-stream sequence of the mutation that wrote the
	// row the call ran under: the row at that sequence is the contract whose
	// fingerprint is Fingerprints.Contract. 0 when no row was found, and on
	// receipts written before it was recorded.
	ContractSeq uint64 `json:"contract_seq,omitempty"`
	// TraceID is the W3C trace id (32 hex digits) of the call's trace when the
	// node that ran it traces (OpenTelemetry): the spans of its entry point,
	// worker, gate, runner, steps and upstream calls share it. Omitted when empty,
	// so a receipt written without tracing is the bytes it always was. The
	// owner's view only: the public receipt does not show it.
	TraceID string `json:"trace_id,omitempty"`
}

// FingerprintHMAC holds a receipt's keyed fingerprints of its input and output:
// the hex HMAC-SHA256 of the whole input (the body) and of the whole output (the
// result), keyed with Salt, 32 random bytes the engine draws for this receipt. The
// public view of a receipt shows Input and Output without Salt: without the salt
// nobody can test a guess about the arguments or the result against them, and two
// calls with the same arguments get unrelated values. With the salt, which the
// owner's view shows, anyone can check a claim about them (see eventlog/wire.KeyedFingerprint).
type FingerprintHMAC struct {
	Salt   string `json:"salt,omitempty"` // hex; the owner's view only
	Input  string `json:"input"`
	Output string `json:"output"`
}

// PublicReceipt is the view of a receipt anyone may see, keyless: what ran (the
// key, its type and runner), when, how it ended, under which contract, and the
// input and output fingerprints only keyed (FingerprintHMAC without its salt).
// Nothing in it lets a reader test a guess about the arguments or the result, and
// nothing names the caller: not the actor (token:<sub>, nats:<client>), not the
// trace the caller's call carried; the owner's view keeps both. A receipt written
// before keyed fingerprints existed shows the contract fingerprint alone. Its
// fields are listed here one by one, so that a field added to the receipt is not
// public unless it is added here.
type PublicReceipt struct {
	InvocationID string             `json:"invocation_id"`
	Key          string             `json:"key"`
	Type         string             `json:"type,omitempty"`
	Runner       string             `json:"runner,omitempty"`
	OK           bool               `json:"ok"`
	Ran          bool               `json:"ran"`
	Material     bool               `json:"material"`
	Status       string             `json:"status"`
	Upstream     int                `json:"upstream_status,omitempty"`
	StartedAt    time.Time          `json:"started_at"`
	FinishedAt   time.Time          `json:"finished_at"`
	DurationMS   float64            `json:"duration_ms"`
	CostUSD      float64            `json:"cost_usd"`
	Fingerprints PublicFingerprints `json:"fingerprints"`
	HMAC         *FingerprintHMAC   `json:"fingerprint_hmac,omitempty"`
}

// PublicFingerprints are the fingerprints a public view shows in the clear.
type PublicFingerprints struct {
	Contract string `json:"contract"`
}

// Public is rc's public view.
func (rc *Receipt) Public() PublicReceipt {
	p := PublicReceipt{
		InvocationID: rc.InvocationID, Key: rc.Key, Type: rc.Type, Runner: rc.Runner,
		OK: rc.OK, Ran: rc.Ran, Material: rc.Material, Status: rc.Status, Upstream: rc.Upstream,
		StartedAt: rc.StartedAt, FinishedAt: rc.FinishedAt, DurationMS: rc.DurationMS, CostUSD: rc.CostUSD,
		Fingerprints: PublicFingerprints{Contract: rc.Fingerprints.Contract},
	}
	if rc.HMAC != nil {
		p.HMAC = &FingerprintHMAC{Input: rc.HMAC.Input, Output: rc.HMAC.Output}
	}
	return p
}
