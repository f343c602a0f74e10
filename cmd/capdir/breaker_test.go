package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/node"
	"github.com/capdir/capdir/node/nodetest"
)

// runErr executes a capdir command expected to fail and returns its error text.
func runErr(t *testing.T, args ...string) string {
	t.Helper()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		t.Fatalf("capdir %s succeeded:\n%s", strings.Join(args, " "), out.String())
	}
	return err.Error()
}

func TestBreakerListAndReset(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer up.Close()
	n := nodetest.Start(t, func(c *node.Config) {
		c.Env = dispatcher.MapEnv(map[string]string{"CLI_TOKEN": "dead"})
	})
	row := `{"key":"CLI_DEAD","type":"http","target":"GET ` + up.URL + `/x","auth":"bearer:CLI_TOKEN",` +
		`"content":"# WHAT: Call a local upstream that refuses every token.\n# ARGS: none\n# EX: [CLI_DEAD][/CLI_DEAD]"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	flags := []string{"--server", n.URL(), "--key", nodetest.Key}
	if out := run(t, append([]string{"breaker", "list"}, flags...)...); out != "no open breakers\n" {
		t.Fatalf("list before: %q", out)
	}
	for range 9 {
		nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"CLI_DEAD","body":""}`)
	}
	if hits.Load() != 8 {
		t.Fatalf("upstream hits = %d", hits.Load())
	}

	out := run(t, append([]string{"breaker", "list"}, flags...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "KEY") || !strings.HasPrefix(lines[1], "CLI_DEAD") ||
		len(strings.Fields(lines[1])) != 4 || strings.Fields(lines[1])[1] != "8" {
		t.Fatalf("list while open:\n%s", out)
	}
	if out := run(t, append([]string{"breaker", "list", "--json"}, flags...)...); !strings.Contains(out, `"key":"CLI_DEAD","strikes":8,"open":true`) {
		t.Fatalf("list --json: %s", out)
	}

	// The owner key can come from the server's data dir.
	if out := run(t, "breaker", "reset", "CLI_DEAD", "--server", n.URL(), "--data", writeKey(t)); out != "breaker CLI_DEAD reset\n" {
		t.Fatalf("reset: %q", out)
	}
	if out := run(t, append([]string{"breaker", "list"}, flags...)...); out != "no open breakers\n" {
		t.Fatalf("list after reset: %q", out)
	}
	nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"CLI_DEAD","body":""}`)
	if hits.Load() != 9 {
		t.Fatalf("after reset the upstream was not called: %d hits", hits.Load())
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"breaker", "list", "--server", n.URL(), "--key", "wrong-key-0123456789"}, "HTTP 401: unauthorized"},
		{append([]string{"breaker", "reset", "BAD.KEY"}, flags...), "HTTP 400"},
		{[]string{"breaker", "list", "--server", n.URL(), "--data", t.TempDir()}, "no owner key"},
		{append([]string{"breaker", "reset"}, flags...), "accepts 1 arg"},
	} {
		if got := runErr(t, tc.args...); !strings.Contains(got, tc.want) {
			t.Errorf("capdir %s: %q, want it to contain %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// writeKey writes the test owner key where capdir serve keeps it and returns the dir.
func writeKey(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "terminal.key"), []byte(nodetest.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
