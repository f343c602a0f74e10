package contract_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
)

// The sample temperature row: an ARGS line naming $1 and $2, and a schema
// requiring two numbers (listed in the other order, so the ARGS line must win).
const (
	tempDoc    = "# WHAT: Current temperature.\n# ARGS: $1=latitude | $2=longitude"
	tempSchema = `{"type":"object","properties":{"longitude":{"type":"number","minimum":-180,"maximum":180},` +
		`"latitude":{"type":"number","minimum":-90,"maximum":90}},"required":["latitude","longitude"],"additionalProperties":false}`
)

// typesSchema declares one property of each type, in this order.
const typesSchema = `{"type":"object","properties":{
	"s":{"type":"string","minLength":2},
	"i":{"type":"integer"},
	"n":{"type":"number"},
	"b":{"type":"boolean"},
	"o":{"type":"object","required":["k"]},
	"a":{"type":"array","items":{"type":"integer"}},
	"nn":{"type":["integer","null"]}
}}`

func signature(t *testing.T, content, schema, target string) *contract.Signature {
	t.Helper()
	s, err := contract.CompileSignature(&contract.Row{Key: "K", Type: "http", Target: target, Content: content, InputSchema: schema})
	if err != nil {
		t.Fatalf("CompileSignature: %v", err)
	}
	return s
}

// How the arguments map onto the schema's properties: the ARGS line first (its
// spacing free), else the order the schema text lists its properties in; which
// position takes the rest.
func TestSignatureMapping(t *testing.T) {
	for _, tc := range []struct {
		name, content, schema, target string
		names                         []string
		rest                          bool
	}{
		{name: "ARGS line", content: tempDoc, schema: tempSchema, names: []string{"latitude", "longitude"}},
		{name: "ARGS line without spaces", content: "# ARGS: $1=latitude|$2=longitude", schema: tempSchema, names: []string{"latitude", "longitude"}},
		{name: "ARGS line with spaces around =", content: "#ARGS :  $2 = longitude |  $1 =latitude", schema: tempSchema, names: []string{"latitude", "longitude"}},
		{name: "ARGS line with a gap", content: "# ARGS: $1=a | $3=c", schema: `{"properties":{"c":{},"a":{}}}`, names: []string{"a", "", "c"}},
		{name: "first pair for a position wins", content: "# ARGS: $1=a | $1=b", schema: `{}`, names: []string{"a"}},
		{name: "ARGS without pairs: schema order", content: "# ARGS: longitude | latitude", schema: tempSchema, names: []string{"longitude", "latitude"}},
		{name: "no ARGS line: schema order", content: "# WHAT: x", schema: typesSchema, names: []string{"s", "i", "n", "b", "o", "a", "nn"}},
		{name: "a later properties key replaces an earlier one", schema: `{"properties":{"a":{}},"type":"object","properties":{"z":{},"y":{}}}`, names: []string{"z", "y"}},
		{name: "no properties: no arguments", schema: `{"type":"object"}`, names: nil},
		{name: "$N+ on the ARGS line", content: "# ARGS: $1=key | $2+=json_body", schema: `{}`, names: []string{"key", "json_body"}, rest: true},
		{name: "$N+ not on the last position", content: "# ARGS: $1+=key | $2=json_body", schema: `{}`, names: []string{"key", "json_body"}},
		{name: "$N+ in the template", content: "# ARGS: $1=key | $2=json_body\n$2+", schema: `{}`, names: []string{"key", "json_body"}, rest: true},
		{name: "$$N+ in the target", schema: `{"properties":{"q":{}}}`, target: "GET http://x/?q=$$1+", names: []string{"q"}, rest: true},
		{name: "$N+ for another position", content: "# ARGS: $1=a | $2=b\n$1+", schema: `{}`, names: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := signature(t, tc.content, tc.schema, tc.target)
			if got := s.Names(); !reflect.DeepEqual(got, tc.names) {
				t.Errorf("names %q, want %q", got, tc.names)
			}
			if s.Rest() != tc.rest {
				t.Errorf("rest %v, want %v", s.Rest(), tc.rest)
			}
		})
	}
}

// A row without input_schema has no signature; a schema that does not compile
// fails as it does on write.
func TestCompileSignatureNoSchema(t *testing.T) {
	s, err := contract.CompileSignature(&contract.Row{Key: "K", Type: "fn", Content: tempDoc})
	if s != nil || err != nil {
		t.Fatalf("no schema: %v, %v; want nil, nil", s, err)
	}
	_, err = contract.CompileSignature(&contract.Row{Key: "K", Type: "fn", InputSchema: `{"type":`})
	if !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("broken schema: %v, want contract.ErrInvalid", err)
	}
}

// A pipe body against the signature: conversion to the declared types, absent
// arguments, extra arguments, $N+, and the first problem's wording.
func TestSignatureCheckPipe(t *testing.T) {
	temp := []string{tempDoc, tempSchema, ""}
	types := []string{"", typesSchema, ""}
	rest := []string{"# ARGS: $1=key | $2+=json_body", `{"properties":{"key":{"type":"string"},"json_body":{"type":"object"}},"required":["key"]}`, ""}
	optional := []string{"# ARGS: $1=a | $2=n | $3=c", `{"properties":{"a":{"type":"string"},"n":{"type":"number"},"c":{"type":"string"}},"required":["c"]}`, ""}
	none := []string{"", `{"type":"object"}`, ""}
	for _, tc := range []struct {
		name string
		sig  []string // content, schema, target
		body string
		want string // the error, "" when valid
	}{
		{"two numbers", temp, "37.77|-122.42", ""},
		{"exponent and integer", temp, "1e1|-122", ""},
		{"not a number", temp, "abc|-122.42", `latitude: must be number, got string "abc"`},
		{"a number with spaces is not a number", temp, " 37.77|-122.42", `latitude: must be number, got string " 37.77"`},
		{"below the minimum", temp, "-91|0", "latitude: must be >= -90, got -91"},
		{"above the maximum", temp, "0|180.5", "longitude: must be <= 180, got 180.5"},
		{"trailing empty is absent", temp, "37.77|", "longitude: is required"},
		{"a number past float64 is still checked", temp, "1e1000|0", "latitude: must be <= 90, got 1e1000"},
		{"an exponent too large to check", temp, "1e999999|0", "latitude: is a number too large to check: at most 400 characters, with an exponent within ±1000"},
		{"an exponent the validator cannot take", temp, "0|-1e99999999", "longitude: is a number too large to check: at most 400 characters, with an exponent within ±1000"},
		{"a number too long to check", temp, "0." + strings.Repeat("1", 400) + "|0", "latitude: is a number too large to check: at most 400 characters, with an exponent within ±1000"},
		{"a huge number inside an array", types, "ab|1|1|true|{\"k\":1}|[1,2e-5000]", "a[1]: is a number too large to check: at most 400 characters, with an exponent within ±1000"},
		{"empty body: both absent, the first reported", temp, "", "latitude: is required"},
		{"the earliest argument is reported first", temp, "abc|xyz", `latitude: must be number, got string "abc"`},
		{"an empty number in the middle is absent", temp, "|-122.42", "latitude: is required"},
		{"one argument too many", temp, "37.77|-122.42|9", `takes at most 2 arguments (latitude | longitude), got 3; a "|" inside an argument splits it in two`},
		{"trailing empties do not count as extra", temp, "37.77|-122.42||", ""},
		{"no arguments taken", none, "x", "takes no arguments, got 1"},
		{"no arguments taken, none sent", none, "", ""},
		{"each type", types, `ab|3|2.5|true|{"k":1}|[1,2]|null`, ""},
		{"string too short", types, "a", "s: must be at least 2 characters, got 1"},
		{"integer", types, "ab|2.5", "i: must be integer, got number 2.5"},
		{"boolean", types, "ab|1|1|yes", `b: must be boolean, got string "yes"`},
		{"object as JSON text", types, `ab|1|1|true|{"j":1}`, "o.k: is required"},
		{"object that is not JSON", types, `ab|1|1|true|{j}`, `o: must be object, got string "{j}"`},
		{"array of the wrong items", types, `ab|1|1|true|{"k":1}|[1,"x"]`, `a[1]: must be integer, got string "x"`},
		{"array that is an object", types, `ab|1|1|true|{"k":1}|{}`, `a: must be array, got string "{}"`},
		{"null or integer: integer", types, "ab||||||7", ""},
		{"null or integer: neither", types, "ab||||||x", `nn: must be null or integer, got string "x"`},
		{"$N+ takes the rest", rest, `ROUTER|{"content":"a|b"}`, ""},
		{"$N+ takes the rest, wrong type", rest, `ROUTER|a|b`, `json_body: must be object, got string "a|b"`},
		{"an empty string in the middle is present", optional, "||c", ""},
		{"an empty number in the middle is absent", optional, "a||c", ""},
		{"required after two empties", optional, "a|1|", "c: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := signature(t, tc.sig[0], tc.sig[1], tc.sig[2])
			err := s.CheckPipe(tc.body)
			checkInputErr(t, err, tc.want)
		})
	}
}

// An object of named arguments: validated as it is, then turned into the pipe
// body the runner gets.
func TestSignaturePipeOf(t *testing.T) {
	temp := []string{tempDoc, tempSchema, ""}
	rest := []string{"# ARGS: $1=key | $2+=json_body", `{"properties":{"key":{"type":"string"},"json_body":{"type":"object"}},"required":["key"]}`, ""}
	loose := []string{"# ARGS: $1=a | $2=b | $3=c", `{"properties":{"a":{},"b":{},"c":{}}}`, ""}
	for _, tc := range []struct {
		name string
		sig  []string
		args string
		pipe string
		want string // the error, "" when valid
	}{
		{"two numbers, their text kept", temp, `{"longitude":-122.420,"latitude":37.77}`, "37.77|-122.420", ""},
		{"a string for a number", temp, `{"latitude":"37.77","longitude":-122.42}`, "", `latitude: must be number, got string "37.77"`},
		{"missing", temp, `{"latitude":37.77}`, "", "longitude: is required"},
		{"an exponent too large to check", temp, `{"latitude":1e99999999,"longitude":0}`, "", "latitude: is a number too large to check: at most 400 characters, with an exponent within ±1000"},
		{"not an argument", temp, `{"latitude":37.77,"longitude":1,"altitude":5}`, "", "altitude: is not an argument of this row; it takes latitude | longitude"},
		{"not an object", temp, `[37.77,-122.42]`, "", `the named arguments must be one JSON object, like {"latitude":37.77,"longitude":-122.42}`},
		{"not JSON", temp, `{"latitude":`, "", `the named arguments must be one JSON object, like {"latitude":37.77,"longitude":-122.42}`},
		{"strings raw, others as compact JSON", loose, `{"a":"x y","b":{"k": [1, 2]},"c":true}`, `x y|{"k":[1,2]}|true`, ""},
		{"absent in the middle is empty", loose, `{"a":"x","c":null}`, "x||null", ""},
		{"trailing absent dropped", loose, `{"a":"x"}`, "x", ""},
		{"nothing", loose, `{}`, "", ""},
		{"a pipe in a middle value", loose, `{"a":"x|y","b":1}`, "", `a: must not contain "|": only the last argument may, and only when the row takes it with $N+`},
		{"a pipe in the last value without $N+", loose, `{"c":"x|y"}`, "", `c: must not contain "|": only the last argument may, and only when the row takes it with $N+`},
		{"a pipe in the rest", rest, `{"key":"ROUTER","json_body":{"content":"a|b"}}`, `ROUTER|{"content":"a|b"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := signature(t, tc.sig[0], tc.sig[1], tc.sig[2])
			pipe, err := s.PipeOf([]byte(tc.args))
			checkInputErr(t, err, tc.want)
			if err == nil && pipe != tc.pipe {
				t.Errorf("pipe %q, want %q", pipe, tc.pipe)
			}
			if err == nil {
				if err := s.CheckPipe(pipe); err != nil {
					t.Errorf("the pipe form %q does not pass CheckPipe: %v", pipe, err)
				}
			}
		})
	}
}

func checkInputErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want != "" && err == nil:
		t.Fatalf("accepted, want %q", want)
	case err != nil:
		if err.Error() != want {
			t.Errorf("error:\n got %q\nwant %q", err.Error(), want)
		}
		var ie *contract.InputError
		if !errors.Is(err, contract.ErrInput) || !errors.As(err, &ie) {
			t.Errorf("%v is not an *InputError wrapping ErrInput", err)
		}
	}
}

// A schema that names no arguments describes the body as one value: a type other
// than object, or {} on a row whose ARGS line names no position.
func TestSignatureWholeBody(t *testing.T) {
	for _, tc := range []struct {
		name, content, schema, body string
		whole                       bool
		want                        string
	}{
		{name: "string", schema: `{"type":"string","maxLength":3}`, body: "a|b", whole: true},
		{name: "string too long", schema: `{"type":"string","maxLength":3}`, body: "abcd", whole: true, want: "body: must be at most 3 characters, got 4"},
		{name: "number", schema: `{"type":"number"}`, body: "abc", whole: true, want: `body: must be number, got string "abc"`},
		{name: "array", schema: `{"type":"array","items":{"type":"integer"}}`, body: `[1,"x"]`, whole: true, want: `body[1]: must be integer, got string "x"`},
		{name: "empty schema takes anything", schema: `{}`, body: "any|thing", whole: true},
		{name: "empty schema with an ARGS line maps it", content: "# ARGS: $1=a", schema: `{}`, body: "x|y", want: `takes at most 1 argument (a), got 2; a "|" inside an argument splits it in two`},
		{name: "object or null is not whole", schema: `{"type":["object","null"]}`, body: "x", want: "takes no arguments, got 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := signature(t, tc.content, tc.schema, "")
			if s.Whole() != tc.whole {
				t.Fatalf("whole %v, want %v", s.Whole(), tc.whole)
			}
			checkInputErr(t, s.CheckPipe(tc.body), tc.want)
			if tc.whole {
				_, err := s.PipeOf([]byte(`{"a":1}`))
				checkInputErr(t, err, `this row's input_schema describes its body as one value, not named arguments: send "body" as a string`)
			}
		})
	}
}
