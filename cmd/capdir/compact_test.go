package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// capdir compact on a stopped node's data dir gives back the pages bbolt has
// freed: the file shrinks, the digest stays, and the node serves the same
// receipts from it. It takes no arguments.
func TestCompactShrinksAStoppedNodesProjection(t *testing.T) {
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	for i := range 300 {
		if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"A","body":"call %d"}`, i)); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	_, recent := nodetest.Do(t, n, "GET", "/api/receipts?limit=5", "")
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	path := capdir.ProjectionPath(dir)
	before, _ := os.Stat(path)
	d := strings.TrimSpace(run(t, "digest", "--data", dir))
	if _, _, err := runCLI(t, "", "compact", "--data", dir, "extra"); err == nil {
		t.Fatal("compact took an argument")
	}
	out := run(t, "compact", "--data", dir)
	after, _ := os.Stat(path)
	if want := fmt.Sprintf("compacted %s: %d bytes, %d before\n", path, after.Size(), before.Size()); out != want || after.Size() >= before.Size() {
		t.Fatalf("compact printed %q; want %q, smaller", out, want)
	}
	if again := strings.TrimSpace(run(t, "digest", "--data", dir)); again != d {
		t.Fatalf("digest after compact %s, before %s", again, d)
	}
	n2 := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	if _, got := nodetest.Do(t, n2, "GET", "/api/receipts?limit=5", ""); got != recent {
		t.Fatalf("receipts after compact\n%s\nbefore\n%s", got, recent)
	}
}
