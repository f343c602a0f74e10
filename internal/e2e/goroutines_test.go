package e2e_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"go.uber.org/goleak"
)

// A node leaves no goroutine behind once Stop returns: starting and stopping one
// three times on one data dir, with HTTP and a NATS listener and a call each time,
// ends with the goroutines the test began with.
func TestNodeStartStopLeaksNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		n, err := capdir.Start(context.Background(), capdir.Config{
			TerminalKey: "leak-test-owner-key-0123",
			Log:         eventlog.Config{DataDir: dir, Listen: "127.0.0.1:0"},
			HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
		}, capdir.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "NO_SUCH_ROW", Credential: wire.OwnerActor}); err != nil || rc.Status != wire.StatusRefusedUnknownKey {
			t.Fatalf("invoke: %v %s", err, rc.Status)
		}
		err = n.Stop(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	goleak.VerifyNone(t, before)
}
