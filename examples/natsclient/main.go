// Command natsclient invokes a capdir row over NATS, with no HTTP involved: it
// publishes an INVOCATION_REQUESTED event to capdir.data.req.<KEY> and reads the
// RECEIPT event from its notice subject, capdir.receipt.<KEY>.<invocation id>.
//
//	go run ./cmd/capdir serve --nats-listen 127.0.0.1:4222 &
//	go run ./examples/natsclient -nats nats://127.0.0.1:4222 NOW
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("nats", nats.DefaultURL, "NATS URL of the capdir cluster")
	body := flag.String("body", "", "the invocation body: arguments separated by |")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: natsclient [-nats URL] [-body 'a|b'] KEY")
		os.Exit(2)
	}
	nc, err := nats.Connect(*url, nats.Name("capdir-natsclient"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(1)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := wire.Invoke(ctx, nc, flag.Arg(0), *body, "nats:natsclient")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, _ := json.MarshalIndent(rc, "", "  ")
	fmt.Println(string(out))
	if !rc.OK {
		os.Exit(1)
	}
}
