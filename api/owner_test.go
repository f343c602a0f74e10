package api_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// Every owner route answers a missing or wrong key with a 401 that names the
// header to send; dispatch, which a capability token may also call, names both.
func TestOwnerRoutes401SayWhichHeader(t *testing.T) {
	n := nodetest.Start(t, nil)
	const owner = `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`
	const dispatch = `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header, or a capability token as Authorization: Bearer <token>"}`
	for _, r := range []struct{ method, path, body, want string }{
		{"GET", "/api/directory", "", owner},
		{"POST", "/api/dispatch", `{"key":"A","body":""}`, dispatch},
		{"GET", "/api/dispatch?key=A", "", dispatch},
		{"GET", "/api/receipts?key=A", "", owner},
		{"GET", "/api/breaker", "", owner},
		{"DELETE", "/api/breaker/A", "", owner},
		{"POST", "/api/tokens", `{"sub":"a","scope":{"keys":["A"]}}`, owner},
		{"DELETE", "/api/tokens/0123", "", owner},
	} {
		for _, key := range []string{"", "not-the-owner-key-0123456789"} {
			code, body := nodetest.DoKey(t, n, r.method, r.path, r.body, key)
			if code != 401 || strings.TrimSpace(body) != r.want {
				t.Errorf("%s %s with key %q: %d %s; want 401 %s", r.method, r.path, key, code, body, r.want)
			}
		}
	}
}
