package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CheckPipe validates a pipe body against the signature: the body is split on
// "|" as the runner splits it, each mapped argument becomes its property, and
// the object of properties must satisfy the schema.
//
// Each argument is converted to the property's declared type first: "integer"
// and "number" read as a JSON number ("37.77", "-1e3"), "boolean" as true or
// false, "null" as null, "object" and "array" as JSON text, "string" as it is.
// A property declaring several types takes the first of null, boolean, integer,
// number, object, array that the text reads as, else the text as a string. A text
// that reads as none of the declared types stays a string, and the schema says
// what is wrong ("latitude: must be number, got string \"abc\"").
//
// An empty argument is absent, so "required" applies to it, when it is trailing
// ("37.77|" leaves $2 absent) or when its property declares types and none of
// them is string. The error wraps ErrInput; it is an *InputError.
func (s *Signature) CheckPipe(body string) error {
	if s.whole {
		return s.checkWhole(body)
	}
	obj, err := s.pipeInstance(body)
	if err != nil {
		return err
	}
	return s.validate(obj)
}

// PipeOf validates an object of named arguments (a JSON object, as a caller
// sends it) against the signature and returns the pipe body the runner gets:
// the values in mapped order, separated by "|", a string as it is and any other
// value as its JSON text, an absent one empty (trailing empties dropped).
//
// Refused (an *InputError wrapping ErrInput): a value that is not a JSON object, a
// name the signature does not map, anything the schema refuses, and a value
// holding "|" anywhere but in the last position when that takes the rest (the
// runner would split it).
func (s *Signature) PipeOf(args []byte) (string, error) {
	if s.whole {
		return "", inputErr("", problemWholeBody)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(args)))
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return "", inputErr("", problemNotAnObject)
	}
	if err := s.unmappedName(obj); err != nil {
		return "", err
	}
	if err := s.validate(obj); err != nil {
		return "", err
	}
	var texts map[string]json.RawMessage
	if err := json.Unmarshal(args, &texts); err != nil {
		return "", inputErr("", problemNotAnObject)
	}
	return s.pipeForm(obj, texts)
}

// checkWhole validates the whole body as one value of the schema's type.
func (s *Signature) checkWhole(body string) error {
	v := convertArg(body, s.top)
	err := s.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return inputErr("body", err.Error())
	}
	return s.firstProblem(ve, v)
}

// pipeInstance is the object of properties a pipe body maps to.
func (s *Signature) pipeInstance(body string) (map[string]any, error) {
	args := strings.Split(body, "|")
	n := len(args)
	for n > 0 && args[n-1] == "" {
		n--
	}
	if n > len(s.names) && !s.rest {
		return nil, s.tooManyArgs(n)
	}
	obj := make(map[string]any, len(s.names))
	for i, name := range s.names {
		if name == "" || i >= n {
			continue
		}
		v := args[i]
		if s.rest && i == len(s.names)-1 {
			v = strings.Join(args[i:], "|")
		}
		if v == "" && !admitsString(s.types[name]) {
			continue
		}
		obj[name] = convertArg(v, s.types[name])
	}
	return obj, nil
}

// admitsString reports whether an empty text may be a present value: the property
// declares no type, or declares string.
func admitsString(types []string) bool {
	return len(types) == 0 || slices.Contains(types, "string")
}

// jsonNumber is the JSON number grammar.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// convertOrder is the order in which a text is tried against the declared types;
// string, which every text reads as, comes last.
var convertOrder = []string{"null", "boolean", "integer", "number", "object", "array"}

// convertArg converts one argument text to the first declared type it reads as.
func convertArg(v string, types []string) any {
	for _, t := range convertOrder {
		if !slices.Contains(types, t) {
			continue
		}
		if x, ok := readAs(v, t); ok {
			return x
		}
	}
	return v
}

// readAs reads v as a value of JSON type t.
func readAs(v, t string) (any, bool) {
	switch t {
	case "null":
		return nil, v == "null"
	case "boolean":
		return v == "true", v == "true" || v == "false"
	case "integer", "number":
		return json.Number(v), jsonNumber.MatchString(v)
	case "object", "array":
		x, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
		if err != nil {
			return nil, false
		}
		_, isObj := x.(map[string]any)
		_, isArr := x.([]any)
		return x, t == "object" && isObj || t == "array" && isArr
	}
	return nil, false
}

// validate checks obj against the schema; the first problem is the error.
func (s *Signature) validate(obj map[string]any) error {
	err := s.schema.Validate(obj)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return inputErr("", err.Error())
	}
	return s.firstProblem(ve, obj)
}

// unmappedName refuses the first name (in byte order) of obj that no position maps.
func (s *Signature) unmappedName(obj map[string]any) error {
	var bad []string
	for k := range obj {
		if s.pos[k] == 0 {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return s.notAnArgument(bad[0])
}

// pipeForm is obj as a pipe body, in mapped order: a string value as it is, any
// other as the caller's JSON text of it (texts), compacted.
func (s *Signature) pipeForm(obj map[string]any, texts map[string]json.RawMessage) (string, error) {
	parts := make([]string, len(s.names))
	for i, name := range s.names {
		v, ok := obj[name]
		if name == "" || !ok {
			continue
		}
		text, isString := v.(string)
		if !isString {
			var b bytes.Buffer
			if err := json.Compact(&b, texts[name]); err != nil {
				return "", inputErr("", problemNotAnObject)
			}
			text = b.String()
		}
		if strings.Contains(text, "|") && !(s.rest && i == len(s.names)-1) {
			return "", s.pipeInValue(name)
		}
		parts[i] = text
	}
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	return strings.Join(parts[:n], "|"), nil
}
