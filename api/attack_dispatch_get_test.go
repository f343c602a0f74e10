package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The GET form of a dispatch takes its arguments from the query, where nothing
// makes them text: a body= that is not UTF-8 is a 400 saying so, nothing is
// appended and nothing runs, for the owner and a token holder alike, with an
// Idempotency-Key or without. Before, the bytes ran as the log's text of them
// (U+FFFD), so the same request sent again under its Idempotency-Key was no
// longer the one stored: 422 idempotency_key_reused for a call that had run.
func TestDispatchGetBodyNotUTF8IsRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/U_ECHO",
		`{"key":"U_ECHO","type":"fn","target":"echo","content":"# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"}`)
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["U_ECHO"]}}`)
	creds := map[string]map[string]string{
		"the owner":        {"x-terminal-key": nodetest.Key},
		"a token's holder": {"Authorization": "Bearer " + tok},
	}
	before := dataSeq(t, n)
	for who, cred := range creds {
		for _, body := range []string{"%FF", "a%C3", "%ED%A0%80", "%C0%AF"} {
			for _, idem := range []string{"", "get-1"} {
				h := map[string]string{"Idempotency-Key": idem}
				if idem == "" {
					delete(h, "Idempotency-Key")
				}
				for k, v := range cred {
					h[k] = v
				}
				for range 2 {
					code, resp := nodetest.DoHeaders(t, n, "GET", "/api/dispatch?key=U_ECHO&body="+body, "", h)
					if code != 400 || !strings.Contains(resp, "body= is not UTF-8") {
						t.Errorf("%s: body=%s (Idempotency-Key %q): %d %s; want 400 saying body= is not UTF-8", who, body, idem, code, resp)
					}
				}
			}
		}
	}
	if after := dataSeq(t, n); after != before {
		t.Fatalf("refused GETs appended %d events", after-before)
	}

	// UTF-8 percent-encoded runs, and runs once under its Idempotency-Key.
	h := map[string]string{"Authorization": "Bearer " + tok, "Idempotency-Key": "get-2"}
	var first string
	for i := range 2 {
		code, resp := nodetest.DoHeaders(t, n, "GET", "/api/dispatch?key=U_ECHO&body=caf%C3%A9", "", h)
		if code != 200 || !strings.Contains(resp, `"result":"café"`) || i == 1 && resp != first {
			t.Fatalf("UTF-8 body, call %d: %d %s (first %s)", i+1, code, resp, first)
		}
		first = resp
	}
}
