package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
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
	return s.validate(convertArg(body, s.top))
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

// validate checks an instance against the schema; the first problem is the
// error. Numbers the validator cannot afford are refused first (see
// checkNumbers), and a validator panic is a refusal, never a crash of the
// worker that called it.
func (s *Signature) validate(instance any) (err error) {
	if err := checkNumbers(instance, ""); err != nil {
		return s.wholePath(err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = inputErr("", problemUncheckable)
		}
	}()
	verr := s.schema.Validate(instance)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return s.wholePath(inputErr("", verr.Error()))
	}
	return s.firstProblem(ve, instance)
}

// Bounds on a number in the arguments: the validator turns each into an exact
// fraction, whose size grows with the exponent (1e999999 is a million digits;
// a larger one crashes it).
const (
	maxNumberLen      = 400
	maxNumberExponent = 1000
)

// checkNumbers refuses the first number inside v (at path) longer than
// maxNumberLen characters or with an exponent beyond ±maxNumberExponent.
func checkNumbers(v any, path string) *InputError {
	switch x := v.(type) {
	case json.Number:
		if len(x) > maxNumberLen || !smallExponent(string(x)) {
			return inputErr(path, fmt.Sprintf(problemNumberTooLarge, maxNumberLen, maxNumberExponent))
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := checkNumbers(x[k], join(path, k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkNumbers(e, join(path, "["+strconv.Itoa(i)+"]")); err != nil {
				return err
			}
		}
	}
	return nil
}

// smallExponent reports whether a JSON number's exponent is within
// ±maxNumberExponent.
func smallExponent(n string) bool {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
	return err == nil && e >= -maxNumberExponent && e <= maxNumberExponent
}

// wholePath names the body as the path of a problem with the whole body.
func (s *Signature) wholePath(e *InputError) *InputError {
	if s.whole {
		e.Path = join("body", e.Path)
	}
	return e
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
