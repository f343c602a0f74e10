package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
)

func postRows(t *testing.T, n *capdir.Node, keys ...string) {
	t.Helper()
	for _, k := range keys {
		row := `{"key":"` + k + `","type":"fn","target":"echo","content":"# WHAT: ` + k + `"}`
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("POST %s: %d %s", k, code, body)
		}
	}
}

func stop(t *testing.T, n *capdir.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// The control stream deleted and created again under a running node (as anyone
// holding the JetStream API can): the node fails with the mismatch instead of
// answering writes with 201 that never show.
func TestNodeFailsWhenTheControlStreamIsRecreatedUnderIt(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRows(t, n, "A", "B")
	logtest.Recreate(t, n.Log(), wire.ControlStream)
	select {
	case err := <-n.Failed():
		if !errors.Is(err, projector.ErrLogBehind) || !strings.Contains(err.Error(), wire.ControlStream) {
			t.Fatalf("node failed with %v; want the log behind the projection", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the node went on serving a control stream deleted and created again")
	}
	code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"C","type":"fn","target":"echo","content":"# WHAT: C"}`)
	if code != 503 || !strings.Contains(body, "the log is behind the projection") || !strings.Contains(body, "capdir replay") {
		t.Fatalf("a write after the mismatch: %d %s; want 503 saying the log is behind", code, body)
	}
	stop(t, n)
}

// A node restarted on a log whose control stream was deleted refuses to start,
// saying which stream, where the projection and the log stand, and what to do; a
// replay of the log as it is recovers, and writes show again.
func TestNodeRefusesABehindLogOnStartAndReplayRecovers(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRows(t, n, "A", "B")
	cfg := n.Config()
	applied := nodetest.ControlSeq(t, n) // the rows and the node key's announcement
	stop(t, n)

	l := logtest.Open(t, cfg.Log.DataDir)
	if err := l.JetStream().DeleteStream(context.Background(), wire.ControlStream); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, err := capdir.Start(context.Background(), cfg, nodetest.Quiet())
	if !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("start on a deleted control stream: %v; want ErrLogBehind", err)
	}
	for _, want := range []string{wire.ControlStream, "ends at sequence 0", fmt.Sprintf("up to sequence %d", applied), "restore", "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}

	l = logtest.Open(t, cfg.Log.DataDir)
	if err := projector.Rebuild(context.Background(), projector.Config{Path: capdir.ProjectionPath(cfg.Log.DataDir), Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	n = nodetest.Start(t, func(c *capdir.Config) { *c = cfg })
	postRows(t, n, "A")
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/A", ""); code != 200 {
		t.Fatalf("GET after the replay: %d %s", code, body)
	}
}
