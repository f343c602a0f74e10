package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// GET /healthz answers anyone the log's and the projection's positions; the
// number of rows only the owner (x-terminal-key). A wrong key is refused as on
// the owner's routes, so the answer tells no one whether a key is right.
func TestHealthzRowsAreTheOwners(t *testing.T) {
	n := nodetest.Start(t, nil)
	for _, k := range []string{"A", "B"} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"`+k+`","type":"fn","target":"echo","content":"# WHAT: say it back\n[\"$1\"]"}`); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", k, code, body)
		}
	}
	health := func(code int, body string) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if code != http.StatusOK || json.Unmarshal([]byte(body), &m) != nil || string(m["ok"]) != "true" || m["streams"] == nil {
			t.Fatalf("GET /healthz: %d %s", code, body)
		}
		return m
	}
	if m := health(nodetest.DoKey(t, n, "GET", "/healthz", "", "")); m["rows"] != nil {
		t.Errorf("anyone is told the number of rows: %s", m["rows"])
	}
	if m := health(nodetest.DoToken(t, n, "GET", "/healthz", "", "not-a-token")); m["rows"] != nil {
		t.Errorf("a bearer is told the number of rows: %s", m["rows"])
	}
	if m := health(nodetest.Do(t, n, "GET", "/healthz", "")); string(m["rows"]) != "2" {
		t.Errorf("the owner is told rows %s, want 2", m["rows"])
	}
	if code, body := nodetest.DoKey(t, n, "GET", "/healthz", "", "wrong-key-wrong-key-wrong"); code != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d %s; want 401", code, body)
	}
}
