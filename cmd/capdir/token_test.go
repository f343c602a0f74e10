package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The owner mints a token with the CLI, a caller invokes with it (--token or
// $CAPDIR_TOKEN) within what it permits, and once the owner revokes it the CLI
// says the server refused it.
func TestTokenMintInvokeRevoke(t *testing.T) {
	n, flags := testServer(t)
	t.Setenv("CAPDIR_TOKEN", "")
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"SAY","type":"fn","target":"echo","content":"# WHAT: say"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"OTHER","type":"fn","target":"echo","content":"# WHAT: other"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	cli := func(args ...string) (string, string, error) {
		t.Helper()
		return runCLI(t, "", append(args, flags...)...)
	}
	tok, stderr, err := cli("token", "mint", "--sub", "cli-agent", "--key", "SAY", "--ttl", "2m", "--body", "fixed")
	if err != nil {
		t.Fatalf("mint: %v %s", err, stderr)
	}
	tok = strings.TrimSpace(tok)
	m := regexp.MustCompile(`^jti ([0-9a-f]{32}) expires \S+Z \(revoke: capdir token revoke ([0-9a-f]{32})\)\n$`).FindStringSubmatch(stderr)
	if strings.Count(tok, ".") != 2 || m == nil || m[1] != m[2] {
		t.Fatalf("mint printed %q on stdout and %q on stderr", tok, stderr)
	}
	jti := m[1]

	if out, _, err := cli("invoke", "--token", "", "SAY", "fixed"); err != errEmptyToken || out != "" {
		t.Fatalf("invoke --token \"\": %v %q; want it refused, not invoked with the owner key", err, out)
	}
	out, stderr, err := cli("invoke", "--token", tok, "SAY", "fixed")
	if err != nil || !strings.HasPrefix(out, "fixed\ninv_") || !strings.Contains(out, "PROVEN_MATERIAL_RESULT") {
		t.Fatalf("invoke --token: %v %q %s", err, out, stderr)
	}
	t.Setenv("CAPDIR_TOKEN", tok)
	if out, _, err := cli("invoke", "SAY", "fixed"); err != nil || !strings.HasPrefix(out, "fixed\n") {
		t.Fatalf("invoke with CAPDIR_TOKEN: %v %q", err, out)
	}
	if _, _, err := cli("invoke", "SAY", "other"); err == nil || !strings.Contains(err.Error(), "HTTP 403: body_fixed:") {
		t.Fatalf("a body other than the fixed one: %v", err)
	}
	if _, _, err := cli("invoke", "OTHER", "fixed"); err == nil || !strings.Contains(err.Error(), "HTTP 403: scope:OTHER") {
		t.Fatalf("a key outside the scope: %v", err)
	}
	if _, _, err := cli("token", "revoke", jti); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	_, _, err = cli("invoke", "SAY", "fixed")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: token:revoked: "+n.URL()+" refused the capability token from the environment variable CAPDIR_TOKEN") {
		t.Fatalf("invoke with a revoked token: %v", err)
	}
	// Mint's own refusals: what is missing, and what the server refuses.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "mint", "--key", "SAY"}, "--sub is required"},
		{[]string{"token", "mint", "--sub", "a"}, "give at least one --key or --category"},
		{[]string{"token", "mint", "--sub", "owner", "--key", "SAY"}, "HTTP 400: token: subject may not be the owner"},
		{[]string{"token", "mint", "--sub", "a", "--key", "SAY", "--ttl", "1500ms"}, "--ttl 1.5s: give a whole number of seconds"},
		{[]string{"token", "revoke", "a.b"}, "HTTP 400:"},
	} {
		if _, _, err := cli(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("capdir %s: %v; want %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
