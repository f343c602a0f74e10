package runner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract/failure"
)

// Substitute never panics, never builds more than its limit, and in JSON mode a
// placeholder inside a string literal can never break out of it.
func FuzzSubstitute(f *testing.F) {
	for _, s := range [][2]string{
		{`["$1","$2+"]`, `Ada|b|c`},
		{`GET http://h/p/$1?q=$2&r=$$3`, `a b|c&d|e`},
		{`{"q":"$1","raw":$2+}`, `x"y|{"k":[1,2]}`},
		{`$PREV $UNSET $$PREV $0 $0+ $99 $1+$1+`, `|||`},
		{strings.Repeat("$1", 50), strings.Repeat("x", 200)},
		{`"\"$1\\"`, `"\`},
		{"\xff$1\u2028", "\x00\xfe"},
	} {
		f.Add(s[0], s[1])
	}
	const limit = 4096
	vars := map[string]string{"PREV": "prev|out", "NAME": `"q"`}
	f.Fuzz(func(t *testing.T, tmpl, body string) {
		args := SplitArgs(body)
		for _, mode := range []Mode{ModeRaw, ModeURL, ModeJSON} {
			out, err := Substitute(tmpl, args, vars, mode, limit)
			if err != nil {
				if !errors.Is(err, ErrSubstitutionTooLarge) {
					t.Fatalf("%s: unexpected error %v", mode, err)
				}
				continue
			}
			if len(out) > limit {
				t.Fatalf("%s: built %d bytes, over the %d limit", mode, len(out), limit)
			}
		}
		// A JSON array template of string slots always renders valid JSON holding the
		// arguments as they were (invalid UTF-8 aside, which JSON replaces).
		out, err := Substitute(`["$1","$2+"]`, args, vars, ModeJSON, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("[\"$1\",\"$2+\"] with %q rendered invalid JSON %q: %v", body, out, err)
		}
		want1, want2 := args[0], ""
		if len(args) > 1 {
			want2 = strings.Join(args[1:], "|")
		}
		if len(got) != 2 || (validUTF8(body) && (got[0] != want1 || got[1] != want2)) {
			t.Fatalf("[\"$1\",\"$2+\"] with %q decoded to %q", body, got)
		}
	})
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// ApplyAuth never panics on any spec, and whatever it applies, the shape-mode view
// redacted with the credential's secrets holds no secret value.
func FuzzApplyAuth(f *testing.F) {
	for _, s := range []string{
		"", "bearer:K", "basic:K", "oauth:K", "query:api_key=K", `headers:{"X-Api-Key":"$K","X":"a $K b"}`,
		`headers:{"A":"$K$K"}`, "query:=K", "query:a", `headers:{`, "apikey:K", "bearer:", ":", "headers:[]",
	} {
		f.Add(s, "s3cr3t-value")
	}
	f.Fuzz(func(t *testing.T, spec, secret string) {
		env := func(string) (string, bool) { return secret, secret != "" }
		req := OutboundRequest{Method: "GET", URL: "https://api.example.test/v1?x=1", Headers: map[string]string{}}
		cred, err := ApplyAuth(spec, env, &req)
		if err != nil {
			var e *failure.Error
			if !errors.As(err, &e) || !strings.HasPrefix(e.Literal, "ERR:auth:") {
				t.Fatalf("ApplyAuth(%q) failed without an ERR:auth: literal: %v", spec, err)
			}
			return
		}
		if !cred.Applied() || len(secret) < 4 {
			return
		}
		// A secret that the public part of the call spells itself (a header name
		// in the spec, the URL) cannot be told from it; it is not a leak.
		if strings.Contains(spec, secret) || strings.Contains("GET https://api.example.test/v1?x=1", secret) {
			return
		}
		shape, _ := json.Marshal(RedactDeep(req.Shape(), cred.Secrets()))
		var back any
		json.Unmarshal(shape, &back)
		if leaked := holding(back, secret); leaked != "" {
			t.Fatalf("ApplyAuth(%q): the redacted shape still holds the secret: %s", spec, shape)
		}
	})
}

// holding returns the first string in a decoded JSON value, keys included, that
// holds secret outside the redaction marker, or "". Each string is looked at on
// its own, and each stretch of it between markers on its own: a secret spelled
// across two strings, or by the marker and the text beside it ("ED b" in
// "REDACTED b"), is not there.
func holding(v any, secret string) string {
	has := func(s string) bool {
		for _, piece := range strings.Split(s, Redacted) {
			if strings.Contains(piece, secret) {
				return true
			}
		}
		return false
	}
	switch t := v.(type) {
	case string:
		if has(t) {
			return t
		}
	case map[string]any:
		for k, e := range t {
			if has(k) {
				return k
			}
			if s := holding(e, secret); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range t {
			if s := holding(e, secret); s != "" {
				return s
			}
		}
	}
	return ""
}
