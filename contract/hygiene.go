package contract

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Hygiene codes: the suffix of "registry_hygiene_refused: <code>".
const (
	CodeMissingDescription    = "missing_description"
	CodeHighRiskMissingSchema = "high_risk_missing_schema"
)

// howToFix holds the repair text of each code; it is the only place these strings live.
// They contain no '<', '>' or '&', so HTML-escaping encoders render them unchanged.
var howToFix = map[string]string{
	CodeMissingDescription: "content (the docstring plus the payload) is required and must describe the capability: " +
		"start content with a \"# WHAT:\" line saying in one sentence what it does, then \"# WHEN_TO_USE:\", " +
		"\"# ARGS:\" (e.g. $1=latitude | $2=longitude) and \"# EX:\" (e.g. [KEY]37.77|-122.42[/KEY]) lines; " +
		"on an agent row the first line of the system prompt is the description",
	CodeHighRiskMissingSchema: "input_schema is required when sensitive is 1: send input_schema, a JSON Schema (as a string) " +
		"describing the arguments, in the same call that sets sensitive, or set sensitive to 0",
}

// RefusalError is a write refused by the registry hygiene gate. Nothing was changed.
// It matches ErrHygieneRefused with errors.Is.
type RefusalError struct {
	Code     string // CodeMissingDescription or CodeHighRiskMissingSchema
	HowToFix string // what to write to make the row compliant
}

func newRefusal(code string) *RefusalError {
	return &RefusalError{Code: code, HowToFix: howToFix[code]}
}

// Error renders the documented literal "registry_hygiene_refused: <code>".
func (e *RefusalError) Error() string {
	return "registry_hygiene_refused: " + e.Code
}

// Is makes errors.Is(err, ErrHygieneRefused) true.
func (e *RefusalError) Is(target error) bool {
	return target == ErrHygieneRefused
}

// Body renders the HTTP response body, exactly
//
//	{"error":"registry_hygiene_refused: <code>","how_to_fix":"…","state_changed":false}
//
// with no HTML escaping and no trailing newline.
func (e *RefusalError) Body() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct { // cannot fail: two strings and a bool
		Error        string `json:"error"`
		HowToFix     string `json:"how_to_fix"`
		StateChanged bool   `json:"state_changed"`
	}{e.Error(), e.HowToFix, false})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// MarshalJSON returns Body, so encoding a *RefusalError yields the response body.
func (e *RefusalError) MarshalJSON() ([]byte, error) {
	return e.Body(), nil
}

// Hygiene returns the first hygiene violation of r, or nil when r is compliant.
// The checks, in order:
//
//   - missing_description: Description(r) is empty.
//   - high_risk_missing_schema: sensitive is 1 and input_schema is empty.
func Hygiene(r *Row) *RefusalError {
	if v := violations(r); len(v) > 0 {
		return newRefusal(v[0])
	}
	return nil
}

// violations returns the codes r violates, in Hygiene's order.
func violations(r *Row) []string {
	var codes []string
	if Description(r) == "" {
		codes = append(codes, CodeMissingDescription)
	}
	if highRiskMissingSchema(r) {
		codes = append(codes, CodeHighRiskMissingSchema)
	}
	return codes
}

func highRiskMissingSchema(r *Row) bool {
	return r.Sensitive == 1 && strings.TrimSpace(r.InputSchema) == ""
}
