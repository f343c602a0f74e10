package api_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// A dispatch body of the wrong shape gets a sentence that names the field and
// what it must hold, not the decoder's Go type names; nothing is appended.
func TestDispatchBodyOfTheWrongShape(t *testing.T) {
	n := nodetest.Start(t, nil)
	before := dataSeq(t, n)
	for _, tc := range []struct{ body, want string }{
		{`{"key":"GREET","body":{"name":"Ada"}}`, `"body" must be a string of pipe-separated arguments, like "Ada|42"`},
		{`{"key":"GREET","body":["Ada",42]}`, `"body" must be a string of pipe-separated arguments, like "Ada|42"`},
		{`{"key":"GREET","body":42}`, `"body" must be a string of pipe-separated arguments, like "Ada|42"`},
		{`{"key":["GREET"],"body":"Ada"}`, `"key" must be a string naming a row, like "GREET"`},
		{`{"key":"GREET","body":"Ada","shape":"yes"}`, `"shape" must be true or false`},
		{`["GREET","Ada"]`, `the dispatch body must be a JSON object; send {"key":"KEY","body":"arg1|arg2"} (optional "shape":true)`},
		{`{"key":"GREET","args":"Ada"}`, `unknown field "args": a dispatch body has only "key", "body" and "shape"`},
		{`{"key":"GREET",}`, `malformed JSON at byte 16`},
	} {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", tc.body)
		var got struct{ Error string }
		decode(t, body, &got)
		if code != 400 || !strings.HasPrefix(got.Error, tc.want) || strings.Contains(got.Error, "Go ") || strings.Contains(got.Error, "unmarshal") {
			t.Errorf("%s: %d %s; want 400 starting %q", tc.body, code, body, tc.want)
		}
	}
	if after := dataSeq(t, n); after != before {
		t.Fatalf("refused dispatches appended: data stream %d -> %d", before, after)
	}
}
