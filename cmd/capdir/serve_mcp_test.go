package main

import (
	"strings"
	"testing"
)

// A malformed --mcp-http or --mcp-stdio stops serve before it starts anything,
// naming the flag and the value.
func TestServeRefusesBadMCPUpstream(t *testing.T) {
	for _, args := range [][]string{
		{"--mcp-http", "gh=ftp://mcp.example"},
		{"--mcp-http", "gh=https://mcp.example nope:X"},
		{"--mcp-stdio", "a/b=run"},
		{"--mcp-http", "x=http://127.0.0.1:1", "--mcp-stdio", "x=run"},
	} {
		cmd := serveCmd()
		cmd.SetArgs(append(args, "--data", t.TempDir(), "--http", "127.0.0.1:0"))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := executeBounded(cmd)
		if err == nil || !strings.Contains(err.Error(), "--mcp-http / --mcp-stdio: mcprunner: bad upstream") {
			t.Errorf("%q: %v", args, err)
		}
	}
}
