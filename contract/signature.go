package contract

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Signature is a row's arguments as its input_schema and docstring define them:
// which pipe position carries which named property, the JSON types each property
// declares, and the compiled schema a call's arguments must satisfy. A Signature
// is immutable and safe for concurrent use; the projector compiles one per row
// version and the dispatcher's gate checks every call to the row against it.
//
// The mapping, in order of precedence:
//
//   - the docstring's ARGS line, when it names positions: "# ARGS: $1=latitude |
//     $2=longitude" maps $1 to the property latitude and $2 to longitude (spacing
//     is free: "$1 = latitude"); a position it does not name is passed to the
//     runner unchecked;
//   - else the schema's top-level properties, in the order the schema text lists
//     them: the first property is $1, the second $2, and so on.
//
// The last mapped position takes every remaining argument, rejoined with "|",
// when the ARGS line writes it $N+ ("$2+=json_body") or the row's target or
// template uses $N+ for it: that is what the runner gives it. Otherwise a call
// with more arguments than mapped positions is refused.
//
// A schema that describes no named arguments describes the body as one value:
// one whose "type" does not include "object" ({"type":"string","maxLength":80}),
// or one that declares neither a type nor properties ({}) on a row whose ARGS
// line names no position. The whole body, converted to the declared type, is
// then the instance; a body of named arguments is refused.
type Signature struct {
	schema *jsonschema.Schema
	// names[i] is the property position i+1 carries; "" for a position no name maps.
	names []string
	// rest: the last position takes the remaining arguments, rejoined with "|".
	rest bool
	// types are each property's declared JSON types (properties.<name>.type).
	types map[string][]string
	// pos is the position (1-based) of each mapped name.
	pos map[string]int
	// whole: the schema describes the body as one value (see CompileSignature).
	whole bool
	// top are the types the schema itself declares.
	top []string
}

// maxArgPosition bounds the positions an ARGS line may name: a "$999999=x" must
// not make every call allocate a million slots.
const maxArgPosition = 64

// CompileSignature compiles r's input_schema (with CompileSchema, as the write
// path does) and maps r's arguments onto it. A row without input_schema has no
// Signature: nil, nil. The error is CompileSchema's.
func CompileSignature(r *Row) (*Signature, error) {
	if r.InputSchema == "" {
		return nil, nil
	}
	sch, err := CompileSchema(r.InputSchema)
	if err != nil {
		return nil, err
	}
	sh := readSchemaShape(r.InputSchema)
	names, rest := argsMapping(ParseDoc(r.Content).Args)
	s := &Signature{schema: sch, types: sh.types, top: sh.top}
	if len(sh.top) > 0 && !slices.Contains(sh.top, "object") || len(sh.top) == 0 && len(sh.order) == 0 && len(names) == 0 {
		s.whole = true
		return s, nil
	}
	if len(names) == 0 {
		names = sh.order
	}
	s.names, s.pos = names, make(map[string]int, len(names))
	for i, n := range names {
		if n != "" {
			s.pos[n] = i + 1
		}
	}
	s.rest = len(names) > 0 && (rest || templateTakesRest(r, len(names)))
	return s, nil
}

// Names are the mapped property names by position ($1 first); "" marks a position
// no name maps; none when the schema describes the body as one value (Whole). The
// slice is the caller's.
func (s *Signature) Names() []string { return append([]string(nil), s.names...) }

// Rest reports whether the last mapped position takes the remaining arguments.
func (s *Signature) Rest() bool { return s.rest }

// Whole reports whether the schema describes the body as one value rather than
// named arguments.
func (s *Signature) Whole() bool { return s.whole }

// argPair is one "$N=name" (or "$N+=name") of an ARGS line.
var argPair = regexp.MustCompile(`\$(\d+)(\+?)\s*=\s*([A-Za-z0-9_][A-Za-z0-9_.\-]*)`)

// argsMapping reads the "$N=name" pairs of an ARGS line: names by position and
// whether the last position is written $N+. The first pair for a position or a
// name wins; positions above maxArgPosition are ignored. No pair: nil.
func argsMapping(args string) (names []string, rest bool) {
	seen := map[string]bool{}
	plus := map[int]bool{}
	for _, m := range argPair.FindAllStringSubmatch(args, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > maxArgPosition || seen[m[3]] {
			continue
		}
		for len(names) < n {
			names = append(names, "")
		}
		if names[n-1] != "" {
			continue
		}
		names[n-1], seen[m[3]] = m[3], true
		plus[n] = m[2] == "+"
	}
	return names, plus[len(names)]
}

// restSlot matches a $N+ or $$N+ placeholder.
var restSlot = regexp.MustCompile(`\$\$?(\d+)\+`)

// templateTakesRest reports whether r's target or template (its content without
// the docstring) uses $N+ for position n ($0+ is $1+).
func templateTakesRest(r *Row, n int) bool {
	for _, m := range restSlot.FindAllStringSubmatch(r.Target+"\n"+StripDocs(r.Content), -1) {
		k, err := strconv.Atoi(m[1])
		if err == nil && (k == n || k == 0 && n == 1) {
			return true
		}
	}
	return false
}

// schemaShape is what the mapping needs of a schema text: its top-level
// properties in the order the text lists them (JSON objects have no order once
// decoded, so the text is read token by token), the types each declares ("type":
// a name or a list of names), and the types the schema itself declares.
type schemaShape struct {
	order []string
	types map[string][]string
	top   []string
}

// readSchemaShape reads the shape of a schema text. A later "properties" or
// "type" key replaces an earlier one, as it does for the validator. A schema that
// does not decode has none.
func readSchemaShape(schema string) (sh schemaShape) {
	dec := json.NewDecoder(strings.NewReader(schema))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return schemaShape{}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return schemaShape{}
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return schemaShape{}
		}
		switch t {
		case "properties":
			sh.order, sh.types = propertyList(raw)
		case "type":
			sh.top = declaredTypes(raw)
		}
	}
	return sh
}

// propertyList reads the value of "properties": an object of property schemas.
// A value of another kind lists no property.
func propertyList(raw json.RawMessage) (order []string, types map[string][]string) {
	pd := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := pd.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	types = map[string][]string{}
	for pd.More() {
		t, err := pd.Token()
		if err != nil {
			return nil, nil
		}
		name, _ := t.(string)
		var p struct {
			Type json.RawMessage `json:"type"`
		}
		if pd.Decode(&p) != nil {
			p.Type = nil // a boolean schema (true/false) declares no type
		}
		if _, dup := types[name]; !dup {
			order = append(order, name)
		}
		types[name] = declaredTypes(p.Type)
	}
	return order, types
}

// declaredTypes reads a "type" value: one name or a list of names.
func declaredTypes(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return nil
}
