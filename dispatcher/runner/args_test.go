package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
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
			got, err := Substitute(tt.tmpl, SplitArgs(tt.body), v, tt.mode, 0)
			if err != nil || got != tt.want {
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
			out, err := Substitute(tmpl, []string{a, a}, nil, ModeJSON, 0)
			var v any
			if err == nil {
				err = json.Unmarshal([]byte(out), &v)
			}
			if err != nil {
				t.Errorf("Substitute(%q, %q) = %s: %v", tmpl, a, out, err)
			}
		}
	}
}

// The rendered size is bounded in every mode and position: at the limit it
// renders, one byte over it is refused.
func TestSubstituteLimit(t *testing.T) {
	tests := []struct {
		name  string
		tmpl  string
		body  string
		mode  Mode
		limit int
		ok    bool
	}{
		{"raw at limit", "$1$1", "abcd", ModeRaw, 8, true},
		{"raw over", "$1$1", "abcd", ModeRaw, 7, false},
		{"rest over", "[$1+]", "ab|cd", ModeRaw, 6, false},
		{"name over", "$PREV$PREV", "", ModeRaw, 9, false},
		{"raw form in url over", "GET https://h/$$1", "a/b", ModeURL, 16, false},
		{"url path counts escapes", "/$1", "a b", ModeURL, 6, true},
		{"url path escape over", "/$1", "a b", ModeURL, 5, false},
		{"url query counts escapes", "?q=$1", "&&", ModeURL, 9, true},
		{"url query escape over", "?q=$1", "&&", ModeURL, 8, false},
		{"json escapes at limit", `["$1"]`, `""`, ModeJSON, 8, true},
		{"json escapes over", `["$1"]`, `""`, ModeJSON, 7, false},
		{"json control char over", `["$1"]`, "\x01", ModeJSON, 9, false},
		{"json outside string over", `[$1]`, "12345", ModeJSON, 6, false},
		{"literal tail over", "$1 and some literal text", "a", ModeRaw, 10, false},
		{"unresolved name over", "$1$NOPE_NOPE", "a", ModeRaw, 5, false},
		{"template without placeholder over", "0123456789", "", ModeRaw, 9, false},
		{"template without placeholder at limit", "0123456789", "", ModeRaw, 10, true},
	}
	vars := map[string]string{"PREV": "prev!"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Substitute(tt.tmpl, SplitArgs(tt.body), vars, tt.mode, tt.limit)
			if tt.ok {
				if err != nil || len(got) > tt.limit {
					t.Fatalf("got %q (%d bytes), %v; want it within %d", got, len(got), err, tt.limit)
				}
				return
			}
			want := fmt.Sprintf("ERR:substitution_too_large:%d", tt.limit)
			if got != "" || !errors.Is(err, ErrSubstitutionTooLarge) || err.Error() != want {
				t.Fatalf("got %q, %v; want %s", got, err, want)
			}
		})
	}
	if _, err := Substitute("$1", []string{strings.Repeat("x", DefaultMaxSubstitutionBytes+1)}, nil, ModeRaw, 0); !errors.Is(err, ErrSubstitutionTooLarge) {
		t.Errorf("limit 0 is not the default: %v", err)
	}
}

// A template repeating $1 a thousand times over a 1 MB body would build 1 GB; it is
// refused at once, having allocated little more than the limit.
func TestSubstituteAmplificationBounded(t *testing.T) {
	tmpl := strings.Repeat("$1", 1000)
	for _, tc := range []struct {
		mode Mode
		tmpl string
		body string
	}{
		{ModeRaw, tmpl, strings.Repeat("x", 1_000_000)},
		{ModeJSON, `["` + tmpl + `"]`, strings.Repeat("x", 1_000_000)},
		{ModeJSON, `["` + tmpl + `"]`, strings.Repeat("\x01", 1_000_000)}, // escapes grow it sixfold
		{ModeURL, "GET https://h/?q=" + tmpl, strings.Repeat("&", 1_000_000)},
	} {
		args := SplitArgs(tc.body)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		out, err := Substitute(tc.tmpl, args, nil, tc.mode, 0)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if out != "" || !errors.Is(err, ErrSubstitutionTooLarge) {
			t.Fatalf("%v: got %d bytes, %v", tc.mode, len(out), err)
		}
		// Builder growth stays under twice the limit. In URL mode net/url also makes
		// two short-lived copies of each escaped value: at most twice the limit for
		// the values written, and those of the one value that did not fit.
		alloc := after.TotalAlloc - before.TotalAlloc
		bound := uint64(2 * DefaultMaxSubstitutionBytes)
		if tc.mode == ModeURL {
			bound += uint64(2*DefaultMaxSubstitutionBytes + 6*len(tc.body))
		}
		if alloc > bound {
			t.Errorf("%v: allocated %d bytes, want at most %d", tc.mode, alloc, bound)
		}
		t.Logf("%v: refused in %v after allocating %.1f MiB", tc.mode, took, float64(alloc)/(1<<20))
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
	fmt.Println(Substitute(target, SplitArgs("37.77|-122.42"), nil, ModeURL, 0))

	// $2+ takes the rest of the body with its pipes; a JSON body passes through intact.
	fmt.Println(Substitute("$2+", SplitArgs(`ROUTER|{"content":"a|b"}`), nil, ModeJSON, 0))

	// Inside a JSON string literal a quote cannot break out.
	fmt.Println(Substitute(`["$1"]`, SplitArgs(`say "hi"`), nil, ModeJSON, 0))

	// $PREV comes from vars; an unresolved name stays as written.
	fmt.Println(Substitute("$PREV / $MISSING", nil, map[string]string{"PREV": "ok"}, ModeRaw, 0))

	// The output is bounded while it is built.
	_, err := Substitute(strings.Repeat("$1", 1000), SplitArgs(strings.Repeat("x", 1024)), nil, ModeRaw, 64<<10)
	fmt.Println(err, errors.Is(err, ErrSubstitutionTooLarge))
	// Output:
	// GET https://api.open-meteo.com/v1/forecast?latitude=37.77&longitude=-122.42&current=temperature_2m <nil>
	// {"content":"a|b"} <nil>
	// ["say \"hi\""] <nil>
	// ok / $MISSING <nil>
	// ERR:substitution_too_large:65536 true
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
				_, _ = Substitute(c.tmpl, args, vars, c.mode, 0)
			}
		})
	}
}
