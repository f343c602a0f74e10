package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// capdir upstream add, list and remove register, show and remove an upstream on
// a running server; a refusal (a URL with user info) and a missing
// registration say what is wrong, and a wrong owner key is refused.
func TestUpstreamAddListRemove(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	_, hs := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) { c.SecretEnv = []string{"UP_*"} })
	keyFile := writeFile(t, "terminal.key", []byte(nodetest.Key+"\n"))
	flags := []string{"--server", n.URL(), "--data", filepath.Dir(keyFile)}
	cli := func(args ...string) (string, string, error) {
		t.Helper()
		return runCLI(t, "", append(args, flags...)...)
	}
	if out, stderr, err := cli("upstream", "list"); err != nil || out != "no upstreams\n" {
		t.Fatalf("list before: %q %q %v", out, stderr, err)
	}
	out, stderr, err := cli("upstream", "add", "up", hs.URL, "--auth", "bearer:UP_TOKEN")
	if err != nil || !strings.Contains(out, "upstream up registered at "+hs.URL) || !strings.Contains(out, "rows UP_*") {
		t.Fatalf("add: %q %q %v", out, stderr, err)
	}
	// The node syncs the upstream's six tools into rows; let it finish before the
	// replay check at cleanup reads the log.
	for deadline := time.Now().Add(20 * time.Second); upRows(t, n) < 6; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream's tools never became rows: %d of 6", upRows(t, n))
		}
	}
	if out, _, err := cli("upstream", "add", "up", hs.URL, "--auth", "bearer:UP_TOKEN"); err != nil || !strings.Contains(out, "nothing changed") {
		t.Fatalf("add again: %q %v", out, err)
	}
	out, _, err = cli("upstream", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != "up registered http "+hs.URL+" bearer:UP_TOKEN" {
		t.Fatalf("list: %q %v", out, err)
	}
	if _, stderr, err := cli("upstream", "add", "bad", "http://u:p@127.0.0.1:1/mcp"); err == nil || !strings.Contains(stderr+err.Error(), "user info") {
		t.Fatalf("add with user info: %q %v", stderr, err)
	}
	if out, _, err := cli("upstream", "remove", "up"); err != nil || !strings.Contains(out, "ERR:mcp:unknown_upstream:up") {
		t.Fatalf("remove: %q %v", out, err)
	}
	if _, stderr, err := cli("upstream", "remove", "up"); err == nil || !strings.Contains(stderr+err.Error(), "no upstream up is registered") {
		t.Fatalf("remove again: %q %v", stderr, err)
	}
	wrong := writeFile(t, "wrong.key", []byte("wrong-key-wrong-key-wrong\n"))
	if _, stderr, err := runCLI(t, "", "upstream", "list", "--server", n.URL(), "--key-file", wrong); err == nil || !strings.Contains(strings.ToLower(stderr+err.Error()), "unauthorized") {
		t.Fatalf("a wrong key: %q %v", stderr, err)
	}
}

// upRows counts the rows of the upstream up's tools.
func upRows(t *testing.T, n *capdir.Node) int {
	count := 0
	for _, r := range listRows(t, n) {
		if strings.HasPrefix(r.Key, "UP_") {
			count++
		}
	}
	return count
}
