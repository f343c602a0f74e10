package client

import (
	"encoding/json"

	"github.com/capdir/capdir/api/answer"
)

// WriteResult is the answer to an accepted POST, PUT or PATCH of a row.
type WriteResult struct {
	OK        bool     `json:"ok"`
	Key       string   `json:"key"`
	UpdatedAt string   `json:"updated_at"`
	Ignored   []string `json:"ignored,omitempty"` // PATCH: fields outside the allow-list
	// Warnings: the literals every call of the row will fail with as written
	// (the row is written all the same).
	Warnings []string `json:"warnings,omitempty"`
	// Created: the write created the row (HTTP 201).
	Created bool `json:"-"`
}

// ListOptions filter and page ListRows; zero values mean no filter and the
// server's defaults (limit 100, at most 1000).
type ListOptions struct {
	Category string
	Type     string
	Enabled  string // "1" or "0"
	Limit    int
	Offset   int
}

// RowPage is one page of rows, in canonical order.
type RowPage struct {
	Rows   []answer.Row `json:"rows"`
	Total  int          `json:"total"`
	Limit  int          `json:"limit"`
	Offset int          `json:"offset"`
	// At is the last control-stream sequence of a page read at a point in time
	// (ListOptions.At); 0 for the live directory.
	At uint64 `json:"at,omitempty"`
}

// RowHistory is a row's every mutation in log order (GET /api/directory/{key}/history).
type RowHistory struct {
	Key     string          `json:"key"`
	Changes []answer.Change `json:"changes"`
}

// ImportOptions configure Import.
type ImportOptions struct {
	// Upsert replaces rows whose key is present (like PUT) instead of failing them.
	Upsert bool
	// ContentType is "application/json" for a JSON array, "application/x-ndjson"
	// for NDJSON; empty lets the server tell them apart by the first byte.
	ContentType string
}

// UpsertQuery is the query of an upsert import; the server's failures that suggest
// it name it.
const UpsertQuery = "?mode=upsert"

// ImportFailure reports one row an import did not write.
type ImportFailure = answer.ImportFailure

// ImportWarning reports one row an import wrote that cannot run as written.
type ImportWarning = answer.ImportWarning

// ImportResult is an import's report.
type ImportResult = answer.ImportResult

// ExportOptions filter Export and choose its format.
type ExportOptions struct {
	Category, Type, Enabled string
	// NDJSON writes one row per line instead of a JSON array.
	NDJSON bool
	// At, when set, exports the directory as it stood then: a control-stream
	// sequence or an RFC 3339 time. Every page is read at the sequence the
	// first one resolved, so the pages agree.
	At string
}

// DispatchRequest is one invocation.
type DispatchRequest struct {
	Key   string `json:"key"`
	Body  string `json:"body"`            // arguments separated by |
	Shape bool   `json:"shape,omitempty"` // build the outbound request, do not send it
	// Args, when set, is sent as the body instead of Body: one JSON object of named
	// arguments, for a row with input_schema.
	Args json.RawMessage `json:"-"`
	// Token, when set, is a capability token presented as Authorization: Bearer
	// instead of the owner key.
	Token string `json:"-"`
}

// MarshalJSON is the dispatch body: "body" is Args when set, else Body.
func (r DispatchRequest) MarshalJSON() ([]byte, error) {
	var body any = r.Body
	if r.Args != nil {
		body = r.Args
	}
	return json.Marshal(struct {
		Key   string `json:"key"`
		Body  any    `json:"body"`
		Shape bool   `json:"shape,omitempty"`
	}{r.Key, body, r.Shape})
}

// MintRequest is a capability token as the owner asks for it (POST /api/tokens).
type MintRequest struct {
	// Sub names the holder; its receipts' actor is token:<Sub>.
	Sub   string     `json:"sub"`
	Scope TokenScope `json:"scope"`
	// Risk is the ceiling: "low" (the server's default), or "high" to invoke rows
	// marked sensitive.
	Risk string `json:"risk,omitempty"`
	// Pin is the contract fingerprint the scope's one row must keep, or "current"
	// for its contract now.
	Pin string `json:"pin,omitempty"`
	// Body, when set, is the only body the token may send.
	Body *string `json:"body,omitempty"`
	// MaxPayload is the largest body the token may send, in bytes (0: the
	// deployment's ceiling).
	MaxPayload int `json:"max_payload,omitempty"`
	// TTLSeconds is the lifetime (0: the server's default).
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
}

// TokenScope is what a token may invoke: the rows of Keys, and of Categories.
type TokenScope struct {
	Keys       []string `json:"keys,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// MintedToken is a minted capability token: the server keeps no copy of Token.
type MintedToken struct {
	Token  string          `json:"token"`
	JTI    string          `json:"jti"` // the id RevokeToken takes
	Exp    int64           `json:"exp"` // expiry, Unix seconds
	Claims json.RawMessage `json:"claims"`
}

// DispatchResult is a dispatch's answer: the result and its proof, or, when the
// receipt was not written within the server's wait, Pending with the invocation id.
type DispatchResult struct {
	OK     bool            `json:"ok"`
	Ran    bool            `json:"ran"`
	Trace  string          `json:"trace"`
	Result string          `json:"result,omitempty"`
	Shape  json.RawMessage `json:"shape,omitempty"` // shape mode's request
	Proof  Proof           `json:"proof"`
	// Pending: the receipt is not written yet; wait for it with Outcome.
	Pending      bool   `json:"pending,omitempty"`
	InvocationID string `json:"invocation_id,omitempty"` // set when Pending
	Receipt      string `json:"receipt,omitempty"`       // set when Pending: its path
	// Status, when Pending, is PENDING_APPROVAL while the call waits for the
	// owner's approval (a sensitive row called with a token), else empty.
	Status string `json:"status,omitempty"`
	// Wait, when Pending, is the path where the caller waits for the outcome.
	Wait string `json:"wait,omitempty"`
	// Raw is the answer as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Proof points at a dispatch's receipt.
type Proof = answer.Proof

// Breaker is one row's auth breaker.
type Breaker = answer.Breaker

// RefusedCaller is one caller its own auth failures refuse on a row.
type RefusedCaller = answer.RefusedCaller
