package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/capdir/capdir/internal/jsonone"
)

// fingerprintVersion separates this encoding from any later one.
const fingerprintVersion = "capdir.contract.v1"

// contractFields is the canonical encoding hashed by Fingerprint. Field order is fixed
// by the struct; changing it, or the set of fields, changes every fingerprint and
// must bump fingerprintVersion.
type contractFields struct {
	V           string `json:"v"`
	Key         string `json:"key"`
	Type        string `json:"type"`
	Runner      string `json:"runner"`
	Category    string `json:"category"`
	Target      string `json:"target"`
	Description string `json:"description"`
	InputSchema string `json:"input_schema"`
	Auth        string `json:"auth"`
	Risk        string `json:"risk"`
	Status      string `json:"status"`
	Includes    string `json:"includes"`
	Payload     string `json:"payload"`
}

// Fingerprint is the contract hash of r: lowercase hex SHA-256 over a canonical JSON
// encoding (one compact object, fixed key order, no HTML escaping, no trailing
// newline, led by "v":"capdir.contract.v1") of the fields that define the call — key, type, effective runner, category,
// target, description, input_schema (re-marshalled, so whitespace and key order do
// not count), auth, risk ("high" when sensitive, else "low"), status ("enabled" or
// "disabled"), includes, and the executable payload (StripDocs of content).
//
// Documentation-only edits leave it unchanged: examples, comment lines other than the
// description, seq, planner_visible, planner_rank, allowed_categories and timestamps.
// Tokens pin this value; receipts record it.
func Fingerprint(r *Row) string {
	risk, status := r.Risk(), "disabled"
	if r.Enabled == 1 {
		status = "enabled"
	}
	c := contractFields{
		V:           fingerprintVersion,
		Key:         r.Key,
		Type:        r.Type,
		Runner:      r.EffectiveRunner(),
		Category:    r.Category,
		Target:      r.Target,
		Description: Description(r),
		InputSchema: canonicalJSON(r.InputSchema),
		Auth:        r.Auth,
		Risk:        risk,
		Status:      status,
		Includes:    r.Includes,
		Payload:     StripDocs(r.Content),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c) // cannot fail: strings only
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-marshals s so that insignificant whitespace and object key order
// do not matter; numbers keep their literal text. Text that is not JSON is returned
// trimmed (such a schema cannot be written, but an imported row might carry one).
func canonicalJSON(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := jsonone.Decode(dec, &v); err != nil {
		return s // trailing data too: "{…}}" is not the schema "{…}"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
