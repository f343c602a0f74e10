package wire

import (
	"encoding/json"
	"strings"
)

// InvocationPrefix starts every invocation id: "inv_" and a lower-case ULID.
const InvocationPrefix = "inv_"

// RequestInvocationID is the invocation id of a request that carries none (a bus
// client may leave it empty): InvocationPrefix and its event id in lower case.
func RequestInvocationID(eventID string) string {
	var b strings.Builder // one allocation, where the prefix and strings.ToLower make two
	b.Grow(len(InvocationPrefix) + len(eventID))
	b.WriteString(InvocationPrefix)
	for i := 0; i < len(eventID); i++ {
		c := eventID[i]
		if c >= 0x80 {
			return InvocationPrefix + strings.ToLower(eventID) // Unicode's lower case
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// InvocationRequest is the data of an INVOCATION_REQUESTED event.
type InvocationRequest struct {
	InvocationID string `json:"invocation_id"` // inv_<ULID>
	Trace        string `json:"trace"`         // t_<...>
	Key          string `json:"key"`
	Body         string `json:"body"`
	// Args are the arguments as one JSON object of named arguments, an alternative
	// to Body for a row with input_schema: the gate validates the object as it is
	// and runs the row with its pipe form (the values in the row's argument order).
	// A request carries Body or Args, not both; JSON null counts as no Args.
	Args  json.RawMessage `json:"args,omitempty"`
	Shape bool            `json:"shape,omitempty"`
	// Credential is the caller's attestation: OwnerActor when the facade checked the
	// owner key. A bus client's request is attributed to ClientActor(<client>) from
	// its subject, whatever this field says. Never a secret.
	Credential string `json:"credential"`
	// Token is the caller's capability token (a compact ES256 JWT, see package
	// dispatcher/gate/token) when the caller is not the owner; empty otherwise. It
	// is a bearer credential: the gate verifies it, and a receipt never copies it.
	Token string `json:"token,omitempty"`
	// DirSeq is the control-stream sequence the requesting node had projected: a
	// worker on another node waits until it has applied as much before it reads the
	// row, so a row is callable the moment its write returns, on every node.
	DirSeq uint64 `json:"dir_seq,omitempty"`
	// Parent, Depth and Chain place a step (a request on StepSubject, written by
	// the engine) in its call tree: the invocation id of the call that made it,
	// how deep it is (1 for a step of a top-level call), and the keys of its
	// ancestors from the top-level call down to its parent, joined by '>' ("A>B";
	// a key never holds one). A worker takes them from its own bookkeeping, never
	// from a request it is sent.
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	Chain  string `json:"chain,omitempty"`
	// Traceparent is the W3C trace context of the span that appended the
	// request (the entry point's, when the node traces): the worker that takes
	// it, on any node, continues that trace. Omitted when empty; never trusted
	// beyond being a trace context (a malformed one starts a fresh trace).
	Traceparent string `json:"traceparent,omitempty"`
	// Tracestate is the W3C tracestate that goes with Traceparent (a caller's
	// vendor data, passed on to the upstream with the trace). Omitted when empty;
	// an invalid one is dropped.
	Tracestate string `json:"tracestate,omitempty"`
}

// Sent is the input r's caller sent: its body, or its named arguments (the JSON
// object as sent) when it carries those. A receipt's input fingerprint, and an
// approval's, cover it.
func (r *InvocationRequest) Sent() string {
	if len(r.Args) > 0 && r.Body == "" {
		return string(r.Args)
	}
	return r.Body
}
