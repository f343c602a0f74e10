package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
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

// A token holder's call to a sensitive row is held: invoke says it waits for the
// owner's approval and how to wait for it; capdir receipt --wait (and invoke
// --wait) with the same token print the outcome once the owner approves, without
// the owner key. Another subject's token is told the id is unknown.
func TestTokenHolderWaitsForItsHeldCall(t *testing.T) {
	n, flags := testServer(t)
	t.Setenv("CAPDIR_TOKEN", "")
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"PAYF","type":"fn","target":"echo","sensitive":1,"input_schema":"{\"type\":\"string\"}","content":"# WHAT: pay"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	cli := func(args ...string) (string, string, error) {
		t.Helper()
		return runCLI(t, "", append(args, flags...)...)
	}
	mintFor := func(sub string) string {
		tok, stderr, err := cli("token", "mint", "--sub", sub, "--key", "PAYF", "--risk", "high", "--ttl", "10m")
		if err != nil {
			t.Fatalf("mint: %v %s", err, stderr)
		}
		return strings.TrimSpace(tok)
	}
	tok, other := mintFor("payer"), mintFor("someone-else")
	out, _, err := cli("invoke", "--token", tok, "PAYF", "10")
	m := regexp.MustCompile(`^(inv_\w+) PENDING_APPROVAL: the row is sensitive, so the call waits for the owner's approval \(capdir approvals\); ` +
		`wait for its outcome with: capdir receipt (inv_\w+) --wait \(with the same token\)\n$`).FindStringSubmatch(out)
	if err != nil || m == nil || m[1] != m[2] {
		t.Fatalf("invoke of a sensitive row with a token: %v %q", err, out)
	}
	inv := m[1]
	if again, _, err := cli("receipt", "--token", tok, inv); err != nil || again != out {
		t.Fatalf("receipt of the held call: %v %q; want %q", err, again, out)
	}
	if _, _, err := cli("receipt", "--token", other, inv); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("receipt with another subject's token: %v", err)
	}

	waited := make(chan string, 1)
	go func() {
		out, _, err := cli("receipt", "--token", tok, "--wait", inv)
		waited <- fmt.Sprint(out, err)
	}()
	if code, body := nodetest.Do(t, n, "POST", "/api/approvals/"+inv, `{"decision":"approve"}`); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	if got, want := <-waited, "10\n"+inv+" PROVEN_MATERIAL_RESULT\n<nil>"; got != want {
		t.Fatalf("receipt --wait: %q; want %q", got, want)
	}

	go func() {
		out, _, err := cli("invoke", "--token", tok, "--wait", "PAYF", "20")
		waited <- fmt.Sprint(out, err)
	}()
	held := waitHeld(t, n)
	if code, body := nodetest.Do(t, n, "POST", "/api/approvals/"+held, `{"decision":"approve"}`); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	want := held + " PENDING_APPROVAL: the row is sensitive, so the call waits for the owner's approval (capdir approvals); waiting for its outcome\n" +
		"20\n" + held + " PROVEN_MATERIAL_RESULT\n<nil>"
	if got := <-waited; got != want {
		t.Fatalf("invoke --wait: %q; want %q", got, want)
	}
}

// waitHeld is the invocation id of the one call waiting for the owner's approval,
// once there is one.
func waitHeld(t *testing.T, n *capdir.Node) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, body := nodetest.Do(t, n, "GET", "/api/approvals", "")
		if m := regexp.MustCompile(`"invocation_id":"(inv_\w+)"`).FindStringSubmatch(body); m != nil {
			return m[1]
		}
		select {
		case <-ctx.Done():
			t.Fatal("no call waits for approval")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
