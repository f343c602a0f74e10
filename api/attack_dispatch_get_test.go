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

// The GET form reads key=, body= and shape=, once each: a misspelled parameter
// (bdy=) or a second body= or key= is a 400 naming it, nothing appended and
// nothing run, where before the call ran with no arguments or with the first
// value alone.
func TestDispatchGetUnreadParametersAreRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/U_ECHO",
		`{"key":"U_ECHO","type":"fn","target":"echo","content":"# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"}`)
	before := dataSeq(t, n)
	for _, c := range []struct{ query, says string }{
		{"key=U_ECHO&bdy=hi", "bdy= is not a parameter"},
		{"key=U_ECHO&body=hi&Body=ho", "Body= is not a parameter"},
		{"key=U_ECHO&body=hi&body=ho", "body= appears 2 times"},
		{"key=U_ECHO&key=OTHER&body=hi", "key= appears 2 times"},
		{"key=U_ECHO&body=hi&shape=1&shape=0", "shape= appears 2 times"},
		{"key=U_ECHO&body=hi&" + strings.Repeat("x", 5000) + "=1", "xxxxxxxx…= is not a parameter"},
	} {
		code, resp := nodetest.Do(t, n, "GET", "/api/dispatch?"+c.query, "")
		if code != 400 || !strings.Contains(resp, c.says) || !strings.Contains(resp, "nothing was run") || len(resp) > 1000 {
			t.Errorf("GET /api/dispatch?%.80s: %d %.300s; want 400 saying %q", c.query, code, resp, c.says)
		}
	}
	if after := dataSeq(t, n); after != before {
		t.Fatalf("refused GETs appended %d events", after-before)
	}
	if code, resp := nodetest.Do(t, n, "GET", "/api/dispatch?key=U_ECHO&body=hi&shape=false", ""); code != 200 || !strings.Contains(resp, `"result":"hi"`) {
		t.Fatalf("the form's own parameters: %d %s", code, resp)
	}
}
