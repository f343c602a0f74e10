package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

func TestInvokeCommand(t *testing.T) {
	n := nodetest.Start(t, nil)
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"SAY","type":"fn","target":"echo","content":"# WHAT: say\n[\"$2+\"]"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	out := run(t, "invoke", "--server", n.URL(), "SAY", "a|b|c")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "b|c" || !strings.HasPrefix(lines[1], "inv_") || !strings.HasSuffix(lines[1], " PROVEN_MATERIAL_RESULT") {
		t.Fatalf("invoke output = %q", out)
	}

	// An unknown key prints the refusal with suggestions and fails.
	cmd := rootCmd()
	var buf bytes.Buffer
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SetArgs([]string{"invoke", "--server", n.URL(), "SAI"})
	if err := cmd.Execute(); err == nil || !strings.Contains(buf.String(), `"did_you_mean":["SAY"]`) {
		t.Fatalf("unknown key: err=%v out=%s", err, buf.String())
	}
}
