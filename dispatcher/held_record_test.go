package dispatcher_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// stackOn runs a projector over l, as newStack does over a log of its own.
func stackOn(t *testing.T, l *eventlog.Log) *stack {
	t.Helper()
	st := &stack{log: l, proj: dispatcher.OpenTestProjection(t, l), fns: fnrunner.NewRegistry(), done: make(chan error, 1)}
	st.minter, st.tokens = dispatcher.NewTestTokens(t)
	return st
}

// A worker writes the request it holds to the held file only where a restart
// needs the record: on a log another node may consume (here an embedded server
// that admits a node). On a log no other node shares the restart resets the
// consumer instead, and the file stays blank while the call runs; an earlier
// process's record in it is still emptied at the start.
func TestHeldFileRecordsOnlyOnASharedLog(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "one node", true: "a node admitted"}[shared]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := eventlog.Config{DataDir: dir}
			if shared {
				if _, _, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "node-b", Role: eventlog.RoleNode}, time.Now()); err != nil {
					t.Fatal(err)
				}
				cfg.Listen = "127.0.0.1:0"
			}
			l, err := eventlog.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			if l.OtherNodes() != shared {
				t.Fatalf("OtherNodes %v; want %v", l.OtherNodes(), shared)
			}
			st := stackOn(t, l)
			running, release := make(chan struct{}), make(chan struct{})
			st.fns.Register("hold", func(ctx context.Context, args []any) (string, error) {
				close(running)
				<-release
				return "done", nil
			})
			held := dispatcher.HeldPath(t.TempDir())
			stale := bytes.Repeat([]byte(" "), 512)
			copy(stale, `{"reply":"$JS.ACK.CAPDIR_DATA.capdir-dispatch.1.7.7.1796000000000000000.0","seq":7,"delivered":1,"since":"2026-12-01T12:00:00Z"}`)
			stale[511] = '\n'
			if err := os.WriteFile(held, stale, 0o600); err != nil {
				t.Fatal(err)
			}
			s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.HeldFile, c.Workers = held, 1 })
			st.run(t)
			st.putRow(t, fnRow("HOLD", "hold", "# WHAT: holds its call until told"))
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			done := make(chan string, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: "HOLD", Credential: "owner:terminal-key"})
				if err != nil {
					done <- err.Error()
					return
				}
				done <- rc.Result
			}()
			select {
			case <-running:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never ran")
			}
			b, err := os.ReadFile(held)
			close(release)
			if err != nil {
				t.Fatal(err)
			}
			recorded := bytes.Contains(b, []byte("$JS.ACK."))
			if bytes.Contains(b, []byte(`"seq":7,`)) {
				t.Fatalf("the earlier process's record is still in the held file:\n%s", bytes.TrimSpace(b))
			}
			if recorded != shared {
				t.Fatalf("while the call runs the held file records it: %v; want %v (shared log %v):\n%q", recorded, shared, shared, bytes.TrimSpace(b))
			}
			if r := <-done; r != "done" {
				t.Fatalf("result %q", r)
			}
		})
	}
}
