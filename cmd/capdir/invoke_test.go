package main

import (
	"bytes"
	"os"
	"regexp"
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

// Every example of invoke --help runs, as written, against the rows the README's
// walk-through writes.
func TestInvokeHelpExamplesRunOnTheREADMERows(t *testing.T) {
	n := nodetest.Start(t, nil)
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The walk-through's row bodies: the curl bodies (-d '{…}') that name a type, with
	// the server's address the shell splices in ('"$CAPDIR_SERVER"') put in.
	readme = bytes.ReplaceAll(readme, []byte(`'"$CAPDIR_SERVER"'`), []byte(n.URL()))
	rows := regexp.MustCompile(`-d '(\{[^']*"type"[^']*\})'`).FindAllSubmatch(readme, -1)
	if len(rows) == 0 {
		t.Fatal("found no row bodies in README.md")
	}
	for _, r := range rows {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(r[1])); code != 201 {
			t.Fatalf("README row %s: %d %s", r[1], code, body)
		}
	}
	var examples int
	for _, line := range strings.Split(invokeCmd().Example, "\n") {
		args := strings.Fields(line)
		if len(args) < 3 || args[0] != "capdir" {
			continue
		}
		examples++
		if _, stderr, err := runCLI(t, "", append(args[1:], "--server", n.URL())...); err != nil {
			t.Errorf("%s: %v %s", strings.TrimSpace(line), err, stderr)
		}
	}
	if examples == 0 {
		t.Fatal("invoke --help has no examples")
	}
}
