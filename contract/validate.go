package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxKeyLen is the longest legal key.
const MaxKeyLen = wire.MaxKeyLen

// Types lists the legal values of the type column, in the documented order.
var Types = []string{TypeFn, TypeHTTP, TypeAgent, TypeFlow}

// HTTPMethods lists the methods an http row's target may name.
var HTTPMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}

// Validate checks every column of r that has a rule and returns all problems joined
// with errors.Join, each a *ValidationError, or nil. It does not apply the hygiene
// gate (see Hygiene) and does not look at the read-only timestamps.
func Validate(r *Row) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(ValidateKey(r.Key))
	add(validateType(r.Type))
	if r.Type == TypeHTTP && strings.TrimSpace(r.Target) != "" {
		if _, _, err := ParseHTTPTarget(r.Target); err != nil {
			add(err)
		}
	}
	add(validateNATSTarget(r))
	if r.InputSchema != "" {
		if _, err := CompileSchema(r.InputSchema); err != nil {
			add(err)
		}
	}
	add(validateExamples(r.Examples))
	add(validateFlag("enabled", r.Enabled))
	add(validateFlag("planner_visible", r.PlannerVisible))
	add(validateFlag("sensitive", r.Sensitive))
	return errors.Join(errs...)
}

// ValidateKey checks that key is 1..128 characters of A-Z a-z 0-9 _ -.
func ValidateKey(key string) error {
	if key == "" {
		return fieldErr(ErrRequired, "key", "is required: 1 to %d characters from A-Z, a-z, 0-9, '_' and '-'", MaxKeyLen)
	}
	if !wire.ValidKey(key) {
		shown := key
		if len(shown) > 40 {
			shown = shown[:37] + "..."
		}
		return fieldErr(ErrInvalid, "key", "must be 1 to %d characters from A-Z, a-z, 0-9, '_' and '-' (no dots, spaces, '*' or '>'); got %q (%d bytes)",
			MaxKeyLen, shown, len(key))
	}
	return nil
}

func validateType(t string) error {
	if t == "" {
		return fieldErr(ErrRequired, "type", "is required: one of fn, http, agent, flow")
	}
	for _, v := range Types {
		if t == v {
			return nil
		}
	}
	return fieldErr(ErrInvalid, "type", "must be one of fn, http, agent, flow; got %q", t)
}

// ParseHTTPTarget splits an http row's target "METHOD url" into its method and URL
// template. The method must be one of HTTPMethods, upper case; the URL must be
// non-empty and contain no whitespace ($N slots are left in place).
func ParseHTTPTarget(target string) (method, url string, err error) {
	parts := strings.Fields(target)
	if len(parts) != 2 {
		return "", "", fieldErr(ErrInvalid, "target", `must be "METHOD url" for an http row, e.g. "GET https://api.x.ai/v1/models"; got %q`, target)
	}
	method, url = parts[0], parts[1]
	for _, m := range HTTPMethods {
		if method == m {
			return method, url, nil
		}
	}
	return "", "", fieldErr(ErrInvalid, "target", `method %q is not one of %s (upper case), in "METHOD url"`,
		method, strings.Join(HTTPMethods, ", "))
}

// schemaURL names the in-memory input_schema resource. Relative $refs resolve against
// it, and every resolved URL other than itself is refused by noLoader.
const schemaURL = "mem:///input_schema.json"

// noLoader refuses to load any schema resource: input_schema must be self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %s refused: input_schema must be self-contained (no remote or file $ref; use $defs)", url)
}

// CompileSchema compiles an input_schema string as JSON Schema (draft 2020-12 unless
// the schema names another with $schema). It never touches the network or the file
// system: a $ref outside the schema itself is refused. The dispatcher's input check
// uses the same function, so a schema accepted on write compiles at call time.
func CompileSchema(schema string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, fieldErr(ErrInvalid, "input_schema", "must be a JSON Schema as a JSON string; it is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fieldErr(ErrInvalid, "input_schema", "cannot be used: %v", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fieldErr(ErrInvalid, "input_schema", "is not a valid JSON Schema: %s", oneLine(err.Error()))
	}
	return sch, nil
}

func validateExamples(examples string) error {
	if examples == "" {
		return nil
	}
	var list []string
	if err := json.Unmarshal([]byte(examples), &list); err != nil || list == nil {
		return fieldErr(ErrInvalid, "examples", `must be a JSON array of argument strings, e.g. "[\"37.77|-122.42\"]"; got %q`, examples)
	}
	return nil
}

func validateFlag(name string, v int) error {
	if v != 0 && v != 1 {
		return fieldErr(ErrInvalid, name, "must be 0 or 1, got %d", v)
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
