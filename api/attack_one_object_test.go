package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// A body whose JSON object is followed by anything but white space (a stray
// "}", a second object, a word) is refused with 400 on every route that reads
// one object, before anything is registered, decided or minted; nothing is
// appended.
func TestOneObjectBodiesRefuseTrailingData(t *testing.T) {
	n := nodetest.Start(t, nil)
	before := nodetest.ControlSeq(t, n)
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/upstreams/up", `{"url":"http://127.0.0.1:1/mcp"}`},
		{"POST", "/api/approvals/inv_01JZZZZZZZZZZZZZZZZZZZZZZZ", `{"decision":"deny"}`},
		{"POST", "/api/tokens", `{"sub":"a","scope":{"keys":["A"]}}`},
	} {
		for _, tail := range []string{"}", " " + r.body, "x", "]", "\n{"} {
			code, body := nodetest.Do(t, n, r.method, r.path, r.body+tail)
			if code != http.StatusBadRequest || !strings.Contains(body, "the body must hold exactly one JSON object: found trailing data") {
				t.Errorf("%s %s %q: %d %.300s; want 400 naming the trailing data", r.method, r.path, r.body+tail, code, body)
			}
			if strings.Contains(body, `"token"`) {
				t.Errorf("%s %s %q minted a token: %.300s", r.method, r.path, r.body+tail, body)
			}
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("refused bodies appended: %d -> %d", before, after)
	}
	mustDo(t, n, http.StatusOK, "PUT", "/api/upstreams/up", "\n{\"url\":\"http://127.0.0.1:1/mcp\"}\r\n\t ")
}
