package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/node"
	"github.com/capdir/capdir/node/nodetest"
	"github.com/capdir/capdir/projector"
)

// capdir serve on a data dir whose control stream was deleted refuses to serve and
// exits non-zero saying why and what to do; capdir replay recovers.
func TestServeRefusesABehindLogAndReplayRecovers(t *testing.T) {
	defer slog.SetDefault(slog.Default()) // serve installs its own
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	n := nodetest.Start(t, nil)
	for _, k := range []string{"A", "B"} {
		row := `{"key":"` + k + `","type":"fn","target":"echo","content":"# WHAT: ` + k + `"}`
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
	}
	cfg := n.Config
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := logtest.Open(t, cfg.DataDir)
	if err := l.JetStream().DeleteStream(context.Background(), eventlog.ControlStream); err != nil {
		t.Fatal(err)
	}
	l.Close()

	_, _, err := runCLI(t, "", "serve", "--data", cfg.DataDir, "--http", "127.0.0.1:0", "--log-level", "error")
	if !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("serve on a deleted control stream: %v; want ErrLogBehind", err)
	}
	for _, want := range []string{eventlog.ControlStream, "ends at sequence 0", "up to sequence 2", "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}

	run(t, "replay", "--data", cfg.DataDir)
	n = nodetest.Start(t, func(c *node.Config) { *c = cfg })
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: A"}`); code != 201 {
		t.Fatalf("POST after the replay: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/A", ""); code != 200 {
		t.Fatalf("GET after the replay: %d %s", code, body)
	}
}

// A component failing under a serving node (here the projector, its control stream
// deleted and created again) ends capdir serve with that error, so it exits
// non-zero, instead of a clean stop.
func TestServeReturnsTheFailureOfARunningNode(t *testing.T) {
	n := nodetest.Start(t, nil)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: A"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	logtest.Recreate(t, n.Log, eventlog.ControlStream)
	err := serveUntil(context.Background(), n, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("serve ended with %v; want the projector's ErrLogBehind", err)
	}
}
