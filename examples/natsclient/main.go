// Command natsclient invokes a capdir row over NATS, with no HTTP involved: it
// publishes an INVOCATION_REQUESTED event on its own request subject,
// capdir.data.bus.<CLIENT>.<KEY>, and reads the RECEIPT event from its own notice
// subject, capdir.receipt.<CLIENT>.<KEY>.<invocation id>. It connects as the bus
// client the operator made with capdir bus add-client:
//
// A bus client is never the owner: it presents a capability token (-token, default
// $CAPDIR_TOKEN), which the owner mints with capdir token mint.
//
// The token is minted for ten minutes (--ttl 10m), not the default minute: the
// first go run compiles the example, which can take longer than a minute.
//
//	./capdir bus add-client demo                # writes capdir-data/bus/demo.nk
//	./capdir serve --nats-listen 127.0.0.1:4222 &
//	CAPDIR_TOKEN=$(./capdir token mint --sub demo --key NOW --ttl 10m) \
//	  go run ./examples/natsclient -nats nats://127.0.0.1:4222 -client demo -nkey capdir-data/bus/demo.nk NOW
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("nats", nats.DefaultURL, "NATS URL of the capdir node or cluster")
	client := flag.String("client", "", "the bus client's name (capdir bus add-client NAME); required")
	nkey := flag.String("nkey", "", "the client's nkey seed file (capdir bus add-client writes DATA/bus/NAME.nk)")
	creds := flag.String("creds", "", "the client's .creds file (user JWT and seed), for a cluster configured with them")
	token := flag.String("token", os.Getenv("CAPDIR_TOKEN"), "a capability token to send with the request, or @FILE to read it from FILE (default $CAPDIR_TOKEN)")
	body := flag.String("body", "", "the invocation body: arguments separated by |")
	flag.Parse()
	if err := run(*url, *client, *nkey, *creds, *token, *body, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "natsclient:", err)
		var usage usageError
		if errors.As(err, &usage) {
			fmt.Fprintln(os.Stderr, "usage: natsclient -client NAME (-nkey FILE | -creds FILE) [-nats URL] [-token TOKEN|@FILE] [-body 'a|b'] KEY")
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(url, client, nkey, creds, token, body string, args []string) error {
	if len(args) != 1 {
		return usageError{"give exactly one row key"}
	}
	if client == "" {
		return usageError{"-client is required: the name the operator gave capdir bus add-client"}
	}
	if (nkey == "") == (creds == "") {
		return usageError{"give one credential: -nkey FILE (the seed capdir bus add-client wrote) or -creds FILE"}
	}
	opts := append(wire.ClientOptions(client), nats.Name("capdir-natsclient-"+client))
	if nkey != "" {
		seed, err := nats.NkeyOptionFromSeed(nkey)
		if err != nil {
			return fmt.Errorf("-nkey %s: %w", nkey, err)
		}
		opts = append(opts, seed)
	} else {
		opts = append(opts, nats.UserCredentials(creds))
	}
	var invokeOpts []wire.InvokeOption
	if token != "" {
		if path, ok := strings.CutPrefix(token, "@"); ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("-token @%s: %w", path, err)
			}
			token = strings.TrimSpace(string(b))
		}
		invokeOpts = append(invokeOpts, wire.WithToken(token))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("connect %s as %s: %w", url, client, err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := wire.Invoke(ctx, nc, client, args[0], body, invokeOpts...)
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(rc, "", "  ")
	fmt.Println(string(out))
	if !rc.OK {
		return fmt.Errorf("%s: %s", rc.Status, rc.Result)
	}
	return nil
}
