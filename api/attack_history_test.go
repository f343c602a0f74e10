package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The history and point-in-time routes, attacked: no credential, a token, and
// hostile ?at= values and keys each get a 4xx that says what to fix; nothing is
// appended; none answers 503, which would say the node failed.
func TestHistoryRoutesAttacked(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/H_ROW",
		`{"key":"H_ROW","type":"fn","target":"echo","content":"# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"}`)
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["H_ROW"]}}`)
	before := nodetest.ControlSeq(t, n)

	for _, path := range []string{"/api/directory/H_ROW/history", "/api/directory/H_ROW?at=1", "/api/directory?at=1", "/api/receipts/01J0000000000000000000000/contract"} {
		if code, body := nodetest.DoKey(t, n, "GET", path, "", ""); code != 401 {
			t.Errorf("GET %s without a credential: %d %s", path, code, body)
		}
		if code, body := nodetest.DoToken(t, n, "GET", path, "", tok); code != 401 || strings.Contains(body, "H_ROW\",\"type") {
			t.Errorf("GET %s with a token: %d %s", path, code, body)
		}
	}
	if code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?key=H_ROW&format=json&at=1", "", tok); code != 401 {
		t.Errorf("a token reads the past of a document: %d %s", code, body)
	}

	for _, c := range []struct {
		path string
		code int
		says string
	}{
		{"/api/directory/H_ROW?at=0", 404, "not_found"},
		{"/api/directory?at=0", 200, `"rows":[],"total":0`},
		{"/api/directory?at=00", 200, `"at":0}`},
		{"/api/dispatch?key=H_ROW&format=json&at=0", 404, "not_found"},
		{"/api/directory/H_ROW?at=-1", 400, "at must be"},
		{"/api/directory/H_ROW?at=18446744073709551616", 400, "at must be"},
		{"/api/directory/H_ROW?at=18446744073709551615", 400, "at most at="},
		{"/api/directory/H_ROW?at=" + url.QueryEscape(strings.Repeat("9", 5000)), 400, "…"},
		{"/api/directory/H_ROW?at=" + url.QueryEscape("2026-13-45T99:00:00Z"), 400, "at must be"},
		{"/api/directory/H_ROW?at=" + url.QueryEscape("\x00\x1b[31m"), 400, "at must be"},
		{"/api/directory/H_ROW?at=", 400, "at must be"},
		{"/api/directory?at=" + url.QueryEscape("1999-01-01T00:00:00Z"), 200, `"rows":[]`},
		{"/api/directory/H_ROW?at=" + url.QueryEscape("1999-01-01T00:00:00Z"), 404, "not_found"},
		{"/api/directory/%3E/history", 400, ""},
		{"/api/directory/" + url.PathEscape("H_ROW.*") + "/history", 400, ""},
		{"/api/directory/" + strings.Repeat("K", 5000) + "/history", 400, ""},
		{"/api/dispatch?key=" + url.QueryEscape(">") + "&format=json&at=1", 400, "key: "},
		{"/api/dispatch?key=" + url.QueryEscape("a b") + "&format=json&at=1", 400, "key: "},
		{"/api/dispatch?key=&format=json&at=1", 400, "key: "},
		{"/api/receipts/" + url.PathEscape("../../x") + "/contract", 404, ""},
		{"/api/receipts/" + strings.Repeat("0", 5000) + "/contract", 404, ""},
	} {
		code, body := nodetest.Do(t, n, "GET", c.path, "")
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("GET %.120s: %d %.300s; want %d saying %q", c.path, code, body, c.code, c.says)
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("reads appended to the control stream: %d -> %d", before, after)
	}
}
