package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The ledger routes, attacked: signing a checkpoint takes the owner key (none, a
// wrong one or a token is 401, and nothing is signed); hostile consistency ranges
// and receipt ids get a 4xx saying what to fix; the public answers carry hashes
// and signatures, never the private key.
func TestLedgerRoutesAttacked(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/L_ROW",
		`{"key":"L_ROW","type":"fn","target":"echo","content":"# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"}`)
	mustDo(t, n, http.StatusOK, "POST", "/api/dispatch", `{"key":"L_ROW","body":"a"}`)
	mustDo(t, n, http.StatusOK, "POST", "/api/ledger/checkpoint", "")
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["L_ROW"]}}`)
	_, signed := nodetest.Do(t, n, "GET", "/api/ledger/checkpoint", "")

	for _, key := range []string{"", wrongKey} {
		if code, body := nodetest.DoKey(t, n, "POST", "/api/ledger/checkpoint", "", key); code != 401 {
			t.Errorf("POST /api/ledger/checkpoint with key %q: %d %s", key, code, body)
		}
	}
	if code, body := nodetest.DoToken(t, n, "POST", "/api/ledger/checkpoint", "", tok); code != 401 {
		t.Errorf("POST /api/ledger/checkpoint with a token: %d %s", code, body)
	}
	if _, now := nodetest.Do(t, n, "GET", "/api/ledger/checkpoint", ""); now != signed {
		t.Errorf("a refused POST signed a checkpoint: %s, then %s", signed, now)
	}

	for _, c := range []struct {
		query string
		says  string
	}{
		{"", "needs ?from=SIZE&to=SIZE"},
		{"from=1", "needs ?from=SIZE&to=SIZE"},
		{"from=0&to=1", "from must be a tree size"},
		{"from=-1&to=1", "from must be a tree size"},
		{"from=1&to=-5", "to must be a tree size"},
		{"from=01&to=1", "from must be a tree size"},
		{"from=+1&to=1", "from must be a tree size"},
		{"from=1e3&to=1", "from must be a tree size"},
		{"from=2&to=1", "must not be larger than to"},
		{"from=1&to=9223372036854775807", "beyond the ledger"},
		{"from=1&to=9223372036854775808", "to must be a tree size"},
		{"from=1&to=" + strings.Repeat("9", 4000), "…"},
		{"from=1&to=" + url.QueryEscape("1\x00"), "to must be a tree size"},
	} {
		code, body := nodetest.Do(t, n, "GET", "/api/ledger/consistency?"+c.query, "")
		if code != 400 || !strings.Contains(body, c.says) || len(body) > 600 {
			t.Errorf("consistency?%.60s: %d %.300s; want 400 saying %q", c.query, code, body, c.says)
		}
	}
	for _, id := range []string{"nope", strings.Repeat("Z", 4000), "..%2F..%2Fapi%2Fdirectory", "%00"} {
		code, body := nodetest.DoKey(t, n, "GET", "/receipt/"+id, "", "")
		if code != 404 || strings.Contains(body, "L_ROW") || len(body) > 600 {
			t.Errorf("GET /receipt/%.40s: %d %.300s; want a short 404", id, code, body)
		}
	}
	_, keys := nodetest.Do(t, n, "GET", "/.well-known/capdir-keys", "")
	for _, body := range []string{keys, signed} {
		if strings.Contains(body, "PRIVATE") {
			t.Fatalf("a public ledger answer holds a private key: %s", body)
		}
	}
}
