package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/eventlog"
)

// A Go program talks to a capdir server over HTTP: write a row, invoke it, read
// its receipt. Here the server is a node started in this process.
func Example() {
	dir, _ := os.MkdirTemp("", "capdir-client-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	n, err := capdir.Start(ctx, capdir.Config{
		TerminalKey: "example-owner-key-0123",
		Log:         eventlog.Config{DataDir: dir},
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(ctx)

	c, err := client.New(n.URL(), "example-owner-key-0123")
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := c.CreateRow(ctx, map[string]any{
		"key": "GREET", "type": "fn", "target": "echo",
		"content": "# WHAT: Greet someone by name.\n[\"Hello, $1!\"]",
	})
	fmt.Println("create:", w.Key, w.Created, err)

	res, err := c.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Body: "Ada"})
	fmt.Println("dispatch:", res.Result, res.Proof.Status, err)

	rc, err := c.Receipt(ctx, res.Proof.InvocationID)
	fmt.Println("receipt:", rc.Key, rc.Body, rc.Status, err)

	out, err := c.Outcome(ctx, res.Proof.InvocationID, 0, "") // as the caller, owner or token holder
	fmt.Println("outcome:", out.Result, out.Proof.Status, err)

	_, err = c.Dispatch(ctx, client.DispatchRequest{Key: "GRET", Body: "Ada"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println("typo:", apiErr.Status, apiErr.Message)
	}
	// Output:
	// create: GREET true <nil>
	// dispatch: Hello, Ada! PROVEN_MATERIAL_RESULT <nil>
	// receipt: GREET Ada PROVEN_MATERIAL_RESULT <nil>
	// outcome: Hello, Ada! PROVEN_MATERIAL_RESULT <nil>
	// typo: 404 unknown_key
}
