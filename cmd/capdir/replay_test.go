package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// run executes a capdir command in-process and returns its output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("capdir %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func TestReplayGivesTheSameDigest(t *testing.T) {
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	for _, row := range []string{
		`{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`,
		`{"key":"B","type":"fn","target":"now","content":"# WHAT: b","seq":3}`,
	} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
	}
	for i := 0; i < 5; i++ {
		nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"A","body":"x"}`)
	}
	nodetest.Do(t, n, "PATCH", "/api/directory/A", `{"category":"c"}`)
	nodetest.Do(t, n, "DELETE", "/api/directory/B", "")
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	before := strings.TrimSpace(run(t, "digest", "--data", dir))
	if len(before) != 64 {
		t.Fatalf("digest = %q", before)
	}
	// Delete the projection outright: replay rebuilds it from the log alone.
	if err := os.Remove(capdir.ProjectionPath(dir)); err != nil {
		t.Fatal(err)
	}
	out := run(t, "replay", "--data", dir)
	if !strings.Contains(out, "events/s") || !strings.Contains(out, "replayed ") {
		t.Fatalf("replay output = %q", out)
	}
	after := strings.TrimSpace(run(t, "digest", "--data", dir))
	if after != before {
		t.Fatalf("digest after replay %s != before %s", after, before)
	}
	// Replaying over an existing projection swaps in an identical one.
	run(t, "replay", "--data", dir)
	if again := strings.TrimSpace(run(t, "digest", "--data", dir)); again != before {
		t.Fatalf("digest after second replay %s != %s", again, before)
	}
}
