package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

func TestBreakerListAndReset(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusUnauthorized, ""))
	n := nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"CLI_TOKEN": "dead"})))
	row := `{"key":"CLI_DEAD","type":"http","target":"GET ` + up.URL + `/x","auth":"bearer:CLI_TOKEN",` +
		`"content":"# WHAT: Call a local upstream that refuses every token.\n# ARGS: none\n# EX: [CLI_DEAD][/CLI_DEAD]"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	// The owner key from the server's data dir.
	keyFile := writeFile(t, "terminal.key", []byte(nodetest.Key+"\n"))
	flags := []string{"--server", n.URL(), "--data", filepath.Dir(keyFile)}
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := runCLI(t, "", args...)
		if err != nil {
			t.Fatalf("capdir %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}

	if out := cli(append([]string{"breaker", "list"}, flags...)...); out != "no open breakers\n" {
		t.Fatalf("list before: %q", out)
	}
	for range 9 {
		nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"CLI_DEAD","body":""}`)
	}
	if up.Hits() != 8 {
		t.Fatalf("upstream hits = %d", up.Hits())
	}

	out := cli(append([]string{"breaker", "list"}, flags...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "KEY STRIKES OPENED_AT CLOSES_AT" {
		t.Fatalf("list while open:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) != 4 || f[0] != "CLI_DEAD" || f[1] != "8" {
		t.Fatalf("list while open:\n%s", out)
	}
	if out := cli(append([]string{"breaker", "list", "--json"}, flags...)...); !strings.Contains(out, `"key":"CLI_DEAD","strikes":8,"open":true`) {
		t.Fatalf("list --json: %s", out)
	}

	// The owner key from --key-file.
	if out := cli("breaker", "reset", "CLI_DEAD", "--server", n.URL(), "--key-file", keyFile); out != "breaker CLI_DEAD reset\n" {
		t.Fatalf("reset: %q", out)
	}
	// The owner key from the environment.
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	if out := cli("breaker", "list", "--server", n.URL(), "--data", t.TempDir()); out != "no open breakers\n" {
		t.Fatalf("list after reset: %q", out)
	}
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"CLI_DEAD","body":""}`)
	if up.Hits() != 9 {
		t.Fatalf("after reset the upstream was not called: %d hits", up.Hits())
	}

	wrongKey := writeFile(t, "wrong.key", []byte("wrong-key-0123456789\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"breaker", "list", "--server", n.URL(), "--key-file", wrongKey}, "HTTP 401: unauthorized: " + n.URL() + " refused the owner key from --key-file " + wrongKey},
		{append([]string{"breaker", "reset", "BAD.KEY"}, flags...), "HTTP 400"},
		{[]string{"breaker", "list", "--server", n.URL(), "--data", t.TempDir()}, "no owner key"},
		{append([]string{"breaker", "reset"}, flags...), "accepts 1 arg"},
	} {
		_, _, err := runCLI(t, "", tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("capdir %s: %v, want an error containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestBreakerResetOfAnUnknownKey(t *testing.T) {
	n, flags := testServer(t)
	_, _, err := runCLI(t, "", append([]string{"breaker", "reset", "NO_SUCH_KEY"}, flags...)...)
	want := "NO_SUCH_KEY is neither a row nor a breaker on " + n.URL() + ": nothing to reset"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("reset of an unknown key: %v; want %q", err, want)
	}
}
