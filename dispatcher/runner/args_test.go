package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"37.77|-122.42", []string{"37.77", "-122.42"}},
		{"a||b|", []string{"a", "", "b", ""}},
		{`ROUTER|{"content":"a|b"}`, []string{"ROUTER", `{"content":"a`, `b"}`}},
	}
	for _, tt := range tests {
		if got := SplitArgs(tt.body); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"PREV": `he said "hi"`, "CITY": "São Paulo", "X1": "x|y"}
	tests := []struct {
		name string
		tmpl string
		body string
		mode Mode
		want string
	}{
		// Positional.
		{"no placeholder", "plain text", "a", ModeRaw, "plain text"},
		{"positional", "$1-$2", "a|b", ModeRaw, "a-b"},
		{"missing arg is empty", "[$1][$2][$3]", "a", ModeRaw, "[a][][]"},
		{"extra args discarded", "$1", "a|b|c", ModeRaw, "a"},
		{"multi digit", "$10|$1", "1|2|3|4|5|6|7|8|9|ten", ModeRaw, "ten|1"},
		{"zero is empty", "[$0]", "a", ModeRaw, "[]"},
		{"rest", "$2+", "a|b|c", ModeRaw, "b|c"},
		{"rest of one", "$2+", "a|b", ModeRaw, "b"},
		{"rest past end", "[$3+]", "a|b", ModeRaw, "[]"},
		{"zero rest is all", "$0+", "a|b", ModeRaw, "a|b"},
		{"empty body", `["$1"]`, "", ModeJSON, `[""]`},

		// Names.
		{"prev", "got: $PREV", "", ModeRaw, `got: he said "hi"`},
		{"name with digits", "$X1", "", ModeRaw, "x|y"},
		{"unresolved left literal", "$NOPE and $1", "a", ModeRaw, "$NOPE and a"},
		{"unresolved raw left literal", "$$NOPE", "", ModeRaw, "$$NOPE"},
		{"lowercase is not a name", "$prev", "", ModeRaw, "$prev"},
		{"name stops at lowercase", "$PREVx", "", ModeRaw, `he said "hi"x`},
		{"lone dollar", "cost $ 5 $", "", ModeRaw, "cost $ 5 $"},
		{"double dollar literal", "$$ and $$.", "", ModeRaw, "$$ and $$."},
		{"nil vars", "$PREV", "", ModeRaw, "$PREV"},

		// URL mode.
		{"url query", "GET https://h/f?latitude=$1&longitude=$2&current=t", "37.77|-122.42", ModeURL,
			"GET https://h/f?latitude=37.77&longitude=-122.42&current=t"},
		{"url missing arg", "GET https://h/f?latitude=$1&longitude=$2&current=t", "37.77", ModeURL,
			"GET https://h/f?latitude=37.77&longitude=&current=t"},
		{"url path escape", "PATCH https://h/api/directory/$1", "A B/C?", ModeURL,
			"PATCH https://h/api/directory/A%20B%2FC%3F"},
		{"url query escape", "GET https://h/s?q=$1", "a b&c=d", ModeURL, "GET https://h/s?q=a+b%26c%3Dd"},
		{"url value with ? does not switch", "GET https://h/$1/$2", "a?b|c d", ModeURL, "GET https://h/a%3Fb/c%20d"},
		{"url fragment", "GET https://h/p#$1", "a b", ModeURL, "GET https://h/p#a+b"},
		{"url raw", "GET https://h/$$1", "a/b?c", ModeURL, "GET https://h/a/b?c"},
		{"url name", "GET https://h/s?city=$CITY", "", ModeURL, "GET https://h/s?city=S%C3%A3o+Paulo"},

		// JSON mode.
		{"json quote cannot break out", `{"q":"$1"}`, `x","admin":true,"y":"`, ModeJSON,
			`{"q":"x\",\"admin\":true,\"y\":\""}`},
		{"json backslash and newline", `["$1"]`, "a\\b\nc\td\x01", ModeJSON, `["a\\b\nc\td\u0001"]`},
		{"json rest passes document", "$2+", `ROUTER|{"content":"a|b"}`, ModeJSON, `{"content":"a|b"}`},
		{"json rest in string", `["$1","$2+"]`, `ROUTER|{"content":"a|b"}`, ModeJSON,
			`["ROUTER","{\"content\":\"a|b\"}"]`},
		{"json outside string raw", `{"n":$1}`, "42", ModeJSON, `{"n":42}`},
		{"json escaped quote in template", `{"a":"x\"$1"}`, `"`, ModeJSON, `{"a":"x\"\""}`},
		{"json after string", `{"a":"s","b":$1}`, `[1,2]`, ModeJSON, `{"a":"s","b":[1,2]}`},
		{"json raw in string", `["$$1"]`, `a"b`, ModeJSON, `["a"b"]`},
		{"json prev", `["$PREV"]`, "", ModeJSON, `["he said \"hi\""]`},
		{"json escaped backslash closes string", `["a\\",$1]`, "7", ModeJSON, `["a\\",7]`},
		{"json invalid utf8", `["$1"]`, "a\xffb", ModeJSON, `["a\ufffdb"]`},
		{"json line separator", `["$1"]`, "a\u2028b", ModeJSON, `["a\u2028b"]`},
		{"json unicode kept", `["$1"]`, "São €", ModeJSON, `["São €"]`},

		// Raw mode.
		{"raw", "$1", `a"b?c d`, ModeRaw, `a"b?c d`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := vars
			if tt.name == "nil vars" {
				v = nil
			}
			got := Substitute(tt.tmpl, SplitArgs(tt.body), v, tt.mode)
			if got != tt.want {
				t.Errorf("Substitute(%q, %q, %v)\n got %s\nwant %s", tt.tmpl, tt.body, tt.mode, got, tt.want)
			}
		})
	}
}

// A JSON template stays valid JSON whatever the arguments hold.
func TestSubstituteJSONStaysValid(t *testing.T) {
	nasty := []string{`"`, `\`, `"]`, "\x00", "\n", `\"`, `","x":"`, "\u2028", "\xff", `$1`, `$PREV`}
	for _, a := range nasty {
		for _, tmpl := range []string{`["$1"]`, `{"k":"$1","n":"$1$1"}`, `["$1+"]`} {
			out := Substitute(tmpl, []string{a, a}, nil, ModeJSON)
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("Substitute(%q, %q) = %s: %v", tmpl, a, out, err)
			}
		}
	}
}

func ExampleSplitArgs() {
	fmt.Printf("%q\n", SplitArgs("37.77|-122.42"))
	fmt.Printf("%q\n", SplitArgs(""))
	// Output:
	// ["37.77" "-122.42"]
	// [""]
}

func ExampleSubstitute() {
	target := "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m"
	fmt.Println(Substitute(target, SplitArgs("37.77|-122.42"), nil, ModeURL))

	// $2+ takes the rest of the body with its pipes; a JSON body passes through intact.
	fmt.Println(Substitute("$2+", SplitArgs(`ROUTER|{"content":"a|b"}`), nil, ModeJSON))

	// Inside a JSON string literal a quote cannot break out.
	fmt.Println(Substitute(`["$1"]`, SplitArgs(`say "hi"`), nil, ModeJSON))

	// $PREV comes from vars; an unresolved name stays as written.
	fmt.Println(Substitute("$PREV / $MISSING", nil, map[string]string{"PREV": "ok"}, ModeRaw))
	// Output:
	// GET https://api.open-meteo.com/v1/forecast?latitude=37.77&longitude=-122.42&current=temperature_2m
	// {"content":"a|b"}
	// ["say \"hi\""]
	// ok / $MISSING
}

func BenchmarkSplitArgs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = SplitArgs(`ROUTER|{"content":"a|b"}|third|fourth`)
	}
}

func BenchmarkSubstitute(b *testing.B) {
	args := SplitArgs(`37.77|-122.42|say "hi"`)
	vars := map[string]string{"PREV": "previous output"}
	cases := []struct {
		name, tmpl string
		mode       Mode
	}{
		{"url", "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m", ModeURL},
		{"json", `{"lat":"$1","lon":"$2","note":"$3","prev":"$PREV"}`, ModeJSON},
		{"none", `{"static":true}`, ModeJSON},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Substitute(c.tmpl, args, vars, c.mode)
			}
		})
	}
}
