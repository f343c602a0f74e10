package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir"
)

// On a 401 the CLI says which key it sent, from where, and how to give another.
func TestCLISaysWhichKeyA401Refused(t *testing.T) {
	n, _ := testServer(t)
	const wrong = "not-the-owner-key-0123456789"
	keyFile := writeFile(t, "wrong.key", []byte(wrong+"\n"))
	dataDir := t.TempDir()
	if err := os.WriteFile(capdir.KeyPath(dataDir), []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env    string
		args   []string
		source string
	}{
		{"", []string{"--key-file", keyFile}, "--key-file " + keyFile},
		{wrong, []string{"--data", t.TempDir()}, "the environment variable CAPDIR_TERMINAL_KEY"},
		{"", []string{"--data", dataDir}, filepath.Join(dataDir, "terminal.key")},
	} {
		t.Setenv("CAPDIR_TERMINAL_KEY", tc.env)
		_, _, err := runCLI(t, "", append([]string{"breaker", "list", "--server", n.URL()}, tc.args...)...)
		want := "GET /api/breaker: HTTP 401: unauthorized: " + n.URL() + " refused the owner key from " + tc.source
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "CAPDIR_TERMINAL_KEY, --key-file FILE or --data DIR") {
			t.Errorf("key from %s: %v; want it to start %q and say how to give another key", tc.source, err, want)
		}
	}
}
