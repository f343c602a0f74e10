package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The upstream routes, attacked beyond the plain refusals: a capability token
// may not list, register or remove one; names with path, control or percent-encoded
// characters, URLs of other schemes or with control characters, and an oversized
// body are each refused with what to fix; nothing is appended.
func TestUpstreamRoutesAttacked(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/U_ROW",
		`{"key":"U_ROW","type":"fn","target":"echo","content":"# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"}`)
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["U_ROW"]}}`)
	before := nodetest.ControlSeq(t, n)
	good := `{"url":"http://127.0.0.1:1/mcp"}`

	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/upstreams", ""}, {"GET", "/api/upstreams/up", ""}, {"PUT", "/api/upstreams/up", good}, {"DELETE", "/api/upstreams/up", ""},
	} {
		code, body := nodetest.DoToken(t, n, r.method, r.path, r.body, tok)
		if code != 401 || !strings.Contains(body, "needs the owner key") {
			t.Errorf("%s %s with a token: %d %s", r.method, r.path, code, body)
		}
	}
	for _, c := range []struct {
		path, body string
		code       int
		says       string
	}{
		{"/api/upstreams/" + url.PathEscape("../x"), good, 400, "not an upstream name"},
		{"/api/upstreams/a%2Fb", good, 400, "not an upstream name"},
		{"/api/upstreams/" + url.PathEscape("a\x1b[2Jb"), good, 400, "not an upstream name"},
		{"/api/upstreams/" + url.PathEscape("a\x00"), good, 400, "not an upstream name"},
		{"/api/upstreams/" + url.PathEscape("*"), good, 400, "not an upstream name"},
		{"/api/upstreams/" + url.PathEscape(">"), good, 400, "not an upstream name"},
		{"/api/upstreams/up", `{"url":"gopher://127.0.0.1:70/x"}`, 400, "http:// or https://"},
		{"/api/upstreams/up", `{"url":"unix:///var/run/docker.sock"}`, 400, "http:// or https://"},
		{"/api/upstreams/up", `{"url":"http:///mcp"}`, 400, "with a host"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp\r\nX-Injected: 1"}`, 400, "http:// or https://"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp#frag"}`, 400, "fragment"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","auth":"bearer:$(id)"}`, 400, "auth"},
		{"/api/upstreams/up", `{"url":"` + strings.Repeat("a", 20000) + `"}`, 413, "16384"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","cmd":"id"}`, 400, "command"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp","args":["-c","id"]}`, 400, "command"},
		{"/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp"} {"command":"id"}`, 400, "one JSON object"},
	} {
		code, body := nodetest.Do(t, n, "PUT", c.path, c.body)
		if code != c.code || !strings.Contains(body, c.says) || strings.ContainsAny(body, "\x1b\x00") {
			t.Errorf("PUT %.60q %.60s: %d %.300s; want %d saying %q", c.path, c.body, code, body, c.code, c.says)
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("refused registrations appended: %d -> %d", before, after)
	}
}
