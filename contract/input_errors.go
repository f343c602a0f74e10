package contract

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	schemakind "github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// InputError is one problem with a call's arguments: the path of the argument
// (a property name, "opts.mode" or "tags[2]" inside one; "" for the arguments as a
// whole) and what is wrong with it, as a short sentence. It wraps ErrInput. The
// sentences are produced in this file and nowhere else.
type InputError struct {
	Path    string
	Problem string
}

// Error renders "<path>: <problem>", or the problem alone.
func (e *InputError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Unwrap returns ErrInput.
func (e *InputError) Unwrap() error { return ErrInput }

func inputErr(path, problem string) *InputError { return &InputError{Path: path, Problem: problem} }

// PipeBodyRule is what a row without input_schema takes: one string. It is the
// dispatch body's sentence for a "body" that is not a string, and the refusal of an
// arguments object sent to such a row.
const PipeBodyRule = `"body" must be a string of pipe-separated arguments, like "Ada|42"`

const problemWholeBody = `this row's input_schema describes its body as one value, not named arguments: send "body" as a string`

const (
	problemNumberTooLarge = "is a number too large to check: at most %d characters, with an exponent within ±%d"
	problemUncheckable    = "cannot be checked against the input_schema"
)

const problemNotAnObject = `the named arguments must be one JSON object, like {"latitude":37.77,"longitude":-122.42}`

// ErrArgsWithoutSchema is the refusal of named arguments (an object) sent to a row
// that has no input_schema to name them.
func ErrArgsWithoutSchema() error {
	return inputErr("", PipeBodyRule+" (this row has no input_schema, so its arguments have no names)")
}

// ErrArgsAndBody is the refusal of a request carrying both a pipe body and named
// arguments.
func ErrArgsAndBody() error {
	return inputErr("", "send the arguments either as the body string or as one object of named arguments, not both")
}

func (s *Signature) tooManyArgs(got int) error {
	if len(s.names) == 0 {
		return inputErr("", fmt.Sprintf("takes no arguments, got %d", got))
	}
	noun := "arguments"
	if len(s.names) == 1 {
		noun = "argument"
	}
	return inputErr("", fmt.Sprintf(`takes at most %d %s (%s), got %d; a "|" inside an argument splits it in two`,
		len(s.names), noun, s.signatureText(), got))
}

func (s *Signature) notAnArgument(name string) error {
	return inputErr(name, fmt.Sprintf("is not an argument of this row; it takes %s", s.signatureText()))
}

func (s *Signature) pipeInValue(name string) error {
	return inputErr(name, `must not contain "|": only the last argument may, and only when the row takes it with $N+`)
}

// signatureText lists the mapped names as a pipe body would carry them,
// "latitude | longitude", "$1 | mode" for an unnamed position, "none" for none.
func (s *Signature) signatureText() string {
	if len(s.names) == 0 {
		return "none"
	}
	parts := make([]string, len(s.names))
	for i, n := range s.names {
		if n == "" {
			n = "$" + strconv.Itoa(i+1)
		}
		parts[i] = n
	}
	if s.rest {
		parts[len(parts)-1] += " (the rest)"
	}
	return strings.Join(parts, " | ")
}

// firstProblem picks one problem of a failed validation, the same one every time:
// of the innermost errors, the one about the earliest mapped argument, then the
// first by its text (the validator walks objects in map order).
func (s *Signature) firstProblem(ve *jsonschema.ValidationError, instance any) error {
	var all []*InputError
	for _, leaf := range leaves(ve, nil) {
		all = append(all, s.wholePath(problemOf(leaf, instance)))
	}
	rank := func(e *InputError) int {
		top, _, _ := strings.Cut(e.Path, ".")
		top, _, _ = strings.Cut(top, "[")
		if p := s.pos[top]; p > 0 {
			return p
		}
		return maxArgPosition + 1
	}
	slices.SortStableFunc(all, func(a, b *InputError) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Error(), b.Error())
	})
	if len(all) == 0 {
		return inputErr("", "does not satisfy the input_schema")
	}
	return all[0]
}

// leaves are the innermost errors of ve.
func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

// problemOf words one innermost validation error.
func problemOf(ve *jsonschema.ValidationError, instance any) *InputError {
	path, v := locate(ve.InstanceLocation, instance)
	switch k := ve.ErrorKind.(type) {
	case *schemakind.Type:
		got := k.Got
		if d := shown(v); d != "" && v != nil {
			got += " " + d
		}
		return inputErr(path, fmt.Sprintf("must be %s, got %s", strings.Join(k.Want, " or "), got))
	case *schemakind.Required:
		return inputErr(join(path, k.Missing[0]), "is required")
	case *schemakind.DependentRequired:
		return inputErr(join(path, k.Missing[0]), fmt.Sprintf("is required when %s is given", k.Prop))
	case *schemakind.Dependency:
		return inputErr(join(path, k.Missing[0]), fmt.Sprintf("is required when %s is given", k.Prop))
	case *schemakind.AdditionalProperties:
		return inputErr(join(path, k.Properties[0]), "is not allowed")
	case *schemakind.FalseSchema:
		return inputErr(path, "is not allowed")
	case *schemakind.Minimum:
		return inputErr(path, fmt.Sprintf("must be >= %s, got %s", rat(k.Want), shownAny(v)))
	case *schemakind.Maximum:
		return inputErr(path, fmt.Sprintf("must be <= %s, got %s", rat(k.Want), shownAny(v)))
	case *schemakind.ExclusiveMinimum:
		return inputErr(path, fmt.Sprintf("must be > %s, got %s", rat(k.Want), shownAny(v)))
	case *schemakind.ExclusiveMaximum:
		return inputErr(path, fmt.Sprintf("must be < %s, got %s", rat(k.Want), shownAny(v)))
	case *schemakind.MultipleOf:
		return inputErr(path, fmt.Sprintf("must be a multiple of %s, got %s", rat(k.Want), shownAny(v)))
	case *schemakind.MinLength:
		return inputErr(path, fmt.Sprintf("must be at least %d characters, got %d", k.Want, k.Got))
	case *schemakind.MaxLength:
		return inputErr(path, fmt.Sprintf("must be at most %d characters, got %d", k.Want, k.Got))
	case *schemakind.Pattern:
		return inputErr(path, fmt.Sprintf("must match the pattern %s, got %s", strconv.Quote(k.Want), shown(v)))
	case *schemakind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = shownAny(w)
		}
		return inputErr(path, fmt.Sprintf("must be one of %s, got %s", strings.Join(want, ", "), shownAny(v)))
	case *schemakind.Const:
		return inputErr(path, fmt.Sprintf("must be %s, got %s", shownAny(k.Want), shownAny(v)))
	case *schemakind.Format:
		return inputErr(path, fmt.Sprintf("must be a valid %s, got %s", k.Want, shownAny(v)))
	case *schemakind.MinItems:
		return inputErr(path, fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got))
	case *schemakind.MaxItems:
		return inputErr(path, fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got))
	case *schemakind.UniqueItems:
		return inputErr(path, fmt.Sprintf("must have unique items; items %d and %d are equal", k.Duplicates[0], k.Duplicates[1]))
	case *schemakind.MinProperties:
		return inputErr(path, fmt.Sprintf("must have at least %d properties, got %d", k.Want, k.Got))
	case *schemakind.MaxProperties:
		return inputErr(path, fmt.Sprintf("must have at most %d properties, got %d", k.Want, k.Got))
	}
	return inputErr(path, "does not satisfy "+strings.Join(ve.ErrorKind.KeywordPath(), "/")+" of the input_schema")
}

// locate follows an instance location into obj: the path as a caller writes it
// ("opts.mode", "tags[2]") and the value found there (nil when there is none).
func locate(loc []string, instance any) (string, any) {
	var b strings.Builder
	cur := instance
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				cur = nil
				continue
			}
			cur = c[i]
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			cur = c[tok]
		default:
			cur = nil
		}
	}
	return b.String(), cur
}

func join(path, name string) string {
	switch {
	case path == "" || name == "":
		return path + name
	case strings.HasPrefix(name, "["):
		return path + name
	}
	return path + "." + name
}

// shownMax bounds how much of a value a problem repeats.
const shownMax = 40

// shown is a scalar value as a problem repeats it ("abc" quoted, 37.77, true), or
// "" for an object or array.
func shown(v any) string {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) > shownMax {
			x = string([]rune(x)[:shownMax]) + "…"
		}
		return strconv.Quote(x)
	case json.Number:
		if len(x) > shownMax {
			return string(x[:shownMax]) + "…"
		}
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	return ""
}

// shownAny is shown, with "an object" or "an array" for those.
func shownAny(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return shown(v)
}

// rat is a number of the schema or the instance as a short decimal.
func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
