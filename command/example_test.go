package command_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
)

// The directory's write path, called without HTTP: what an MCP server or a Go
// program embedding capdir does. Each write is readable when it returns.
func ExampleDirectory() {
	dir, _ := os.MkdirTemp("", "capdir-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	n, err := capdir.Start(ctx, capdir.Config{
		TerminalKey: "example-owner-key",
		Log:         eventlog.Config{DataDir: dir},
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(ctx)
	d := n.Directory()

	f, err := contract.DecodeFields([]byte(`{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: Greet someone.\n[\"Hello, $1!\"]"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := d.Create(ctx, f)
	fmt.Println(res.Action, res.Key, res.Created, err)

	_, err = d.Create(ctx, f)
	fmt.Println(errors.Is(err, command.ErrExists), err)

	patch, _ := contract.DecodeFields([]byte(`{"category":"demo","sensitive":1}`))
	res, err = d.Patch(ctx, "GREET", patch)
	fmt.Println(res.Action, res.Row.Category, res.Ignored, err)

	// A row that cannot run as written is written, with a warning.
	later, _ := contract.DecodeFields([]byte(`{"key":"LATER","type":"fn","target":"deployed_tomorrow"}`))
	res, err = d.Create(ctx, later)
	fmt.Println(res.Created, res.Warnings, err)
	// Output:
	// create GREET true <nil>
	// true GREET: exists
	// patch demo [sensitive] <nil>
	// true [ERR:fn:unknown_target:deployed_tomorrow] <nil>
}
