package api_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// Every owner route answers a missing or wrong key with a 401 that names the
// header to send.
func TestOwnerRoutes401SayWhichHeader(t *testing.T) {
	n := nodetest.Start(t, nil)
	const want = `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/directory", ""},
		{"POST", "/api/dispatch", `{"key":"A","body":""}`},
		{"GET", "/api/dispatch?key=A", ""},
		{"GET", "/api/receipts?key=A", ""},
		{"GET", "/api/breaker", ""},
		{"DELETE", "/api/breaker/A", ""},
	} {
		for _, key := range []string{"", "not-the-owner-key-0123456789"} {
			code, body := nodetest.DoKey(t, n, r.method, r.path, r.body, key)
			if code != 401 || strings.TrimSpace(body) != want {
				t.Errorf("%s %s with key %q: %d %s; want 401 %s", r.method, r.path, key, code, body, want)
			}
		}
	}
}
