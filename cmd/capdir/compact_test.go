package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// capdir compact on a stopped node's data dir gives back the pages bbolt has
// freed: the file shrinks, the digest stays, and the node's receipt endpoints
// answer byte for byte as before. It takes no arguments.
func TestCompactShrinksAStoppedNodesProjection(t *testing.T) {
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	var paths []string // the receipt endpoints of some calls
	for i := range 300 {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"A","body":"call %d"}`, i))
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		if i%100 == 0 {
			var ans struct {
				Proof struct {
					InvocationID string `json:"invocation_id"`
				} `json:"proof"`
			}
			json.Unmarshal([]byte(body), &ans)
			paths = append(paths, "/api/receipts/"+ans.Proof.InvocationID) // the public one carries the ledger's latest checkpoint
		}
	}
	paths = append(paths, "/api/receipts?key=A&limit=5", "/api/ledger/consistency?from=100&to=300")
	answers := map[string]string{}
	for _, p := range paths {
		code, body := nodetest.Do(t, n, "GET", p, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", p, code, body)
		}
		answers[p] = body
	}
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
	for _, p := range paths {
		if code, got := nodetest.Do(t, n2, "GET", p, ""); code != 200 || got != answers[p] {
			t.Fatalf("GET %s after compact: %d\n%s\nbefore\n%s", p, code, got, answers[p])
		}
	}
}
