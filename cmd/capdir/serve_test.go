package main

import (
	"bytes"
	"strings"
	"testing"
)

// serve documents its drain and refuses a negative --shutdown-timeout before
// anything starts.
func TestServeShutdownTimeoutFlag(t *testing.T) {
	help := run(t, "serve", "--help")
	if !strings.Contains(help, "--shutdown-timeout") || !strings.Contains(help, "calls in flight") || !strings.Contains(help, "(default 30s)") {
		t.Fatalf("serve --help does not document --shutdown-timeout:\n%s", help)
	}
	dir := t.TempDir()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"serve", "--data", dir, "--http", "127.0.0.1:0", "--shutdown-timeout", "-1s"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--shutdown-timeout -1s") {
		t.Fatalf("serve --shutdown-timeout -1s: %v", err)
	}
}
