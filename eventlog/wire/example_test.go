package wire_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// A bus client invokes a row with a NATS connection and nothing else of capdir's:
// its credential (an nkey seed capdir bus add-client wrote), its connection
// options, and Invoke, which publishes the request into the log on the client's
// own subject and waits for the receipt's notice. A bus client is never the owner:
// it needs a capability token (wire.WithToken). This one has none, so the gate
// refuses it (token:required) and nothing runs; the receipt says so.
func ExampleInvoke() {
	dir, _ := os.MkdirTemp("", "wire-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The operator's side: a client credential, then a node whose embedded NATS
	// server listens on a loopback port.
	_, seedFile, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "example", Role: eventlog.RoleClient}, time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := capdir.Start(ctx, capdir.Config{
		TerminalKey: "example-owner-key",
		Log:         eventlog.Config{DataDir: dir, Listen: "127.0.0.1:0"},
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(context.Background())

	// The client's side.
	seed, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	nc, err := nats.Connect(n.Log().ClientURL(), append(wire.ClientOptions("example"), seed)...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	rc, err := wire.Invoke(ctx, nc, "example", "NO_SUCH_ROW", "x")
	fmt.Println(rc.Status, rc.Result, rc.Ran, rc.Actor, err)
	// Output: REFUSED_TOKEN token:required false nats:example <nil>
}
