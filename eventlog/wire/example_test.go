package wire_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// A bus client invokes a row with a NATS connection and nothing else of capdir's:
// Invoke publishes the request into the log and waits for the receipt's notice.
// A caller other than the owner needs a capability token: this one has none, so
// the gate refuses it (token:required) and nothing runs; the receipt says so.
func ExampleInvoke() {
	dir, _ := os.MkdirTemp("", "wire-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A node whose embedded NATS server listens on a loopback port.
	n, err := capdir.Start(ctx, capdir.Config{DataDir: dir, TerminalKey: "example-owner-key", NATSListen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(context.Background())

	nc, err := nats.Connect(n.Log.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	rc, err := wire.Invoke(ctx, nc, "NO_SUCH_ROW", "x", "nats:example")
	fmt.Println(rc.Status, rc.Result, rc.Ran, rc.Actor, err)
	// Output: REFUSED_TOKEN token:required false nats:example <nil>
}
