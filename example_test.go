package capdir_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A Go program embeds capdir with its own fn capabilities: register the functions,
// start a node, write a row naming one, and invoke it. The node serves the same
// HTTP and bus surface as capdir serve when HTTP.Addr or Log.Listen are set. Each
// component's settings sit in its own config type (Log, Projector, Dispatch, API,
// HTTP, the runners'); their zero values are the defaults.
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
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
		Fn:          fnrunner.Config{Registry: fns},
		TerminalKey: "example-owner-key",
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Stop(context.Background())

	// A row is written like any other, here through the HTTP facade.
	req, _ := http.NewRequestWithContext(ctx, "POST", n.URL()+"/api/directory",
		strings.NewReader(`{"key":"SHOUT","type":"fn","target":"shout","content":"# WHAT: Shout the text back."}`))
	req.Header.Set("x-terminal-key", "example-owner-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("write:", resp.StatusCode)

	rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: "hello", Credential: api.OwnerActor})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rc.Status, rc.Result)
	// Output:
	// write: 201
	// PROVEN_MATERIAL_RESULT HELLO!
}
