package capdir_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A Go program embeds capdir with its own fn capabilities: register the
// functions, start a node, write a row naming one, and invoke it, all in Go.
// The node serves the same HTTP and bus surface as capdir serve when HTTP.Addr
// or Log.Listen are set; here it serves none. Each component's settings sit in
// its own config type (Log, Projector, Dispatch, API, HTTP, the runners'); their
// zero values are the defaults. What the node is wired to (its logger, clock,
// environment) is passed as options.
func Example() {
	dir, _ := os.MkdirTemp("", "capdir-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fns := fnrunner.NewRegistry()
	fns.Register("shout", func(_ context.Context, args []any) (string, error) {
		return strings.ToUpper(fmt.Sprint(args[0])) + "!", nil
	})
	n, err := capdir.Start(ctx, capdir.Config{
		Log:         eventlog.Config{DataDir: dir},
		Fn:          fnrunner.Config{Registry: fns},
		TerminalKey: "example-owner-key",
	}, capdir.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(context.Background())

	// A row is written through the directory, as the REST routes write it.
	w, err := n.Directory().Create(ctx, contract.FieldsFromRow(contract.Row{
		Key: "SHOUT", Type: "fn", Target: "shout", Enabled: 1, Content: "# WHAT: Shout the text back.",
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("write:", w.Action, w.Key)

	// It is callable at once; a call without a token is the owner's.
	rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: "hello"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rc.Status, rc.Result)
	// Output:
	// write: create SHOUT
	// PROVEN_MATERIAL_RESULT HELLO!
}
