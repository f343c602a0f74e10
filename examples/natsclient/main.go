// Command natsclient invokes a capdir row over NATS, with no HTTP involved: it
// publishes an INVOCATION_REQUESTED event to capdir.data.req.<KEY> and reads the
// RECEIPT event from its notice subject, capdir.receipt.<KEY>.<invocation id>.
// A caller other than the owner presents a capability token (-token, default
// $CAPDIR_TOKEN), which the owner mints with capdir token mint.
//
//	go run ./cmd/capdir serve --nats-listen 127.0.0.1:4222 &
//	CAPDIR_TOKEN=$(go run ./cmd/capdir token mint --sub natsclient --key NOW) \
//	  go run ./examples/natsclient -nats nats://127.0.0.1:4222 NOW
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
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	url := flag.String("nats", nats.DefaultURL, "NATS URL of the capdir cluster")
	body := flag.String("body", "", "the invocation body: arguments separated by |")
	token := flag.String("token", os.Getenv("CAPDIR_TOKEN"), "capability token (default $CAPDIR_TOKEN)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: natsclient [-nats URL] [-body 'a|b'] [-token T] KEY")
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
	rc, err := invoke(ctx, nc, wire.InvocationRequest{Key: flag.Arg(0), Body: *body, Credential: "nats:natsclient", Token: *token})
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

// invoke subscribes to the request's receipt notice, publishes the request into
// the log (waiting for JetStream's ack) and waits for the receipt.
func invoke(ctx context.Context, nc *nats.Conn, req wire.InvocationRequest) (wire.Receipt, error) {
	var rc wire.Receipt
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		return rc, err
	}
	receipts := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe(wire.ReceiptNoticeSubject(req.Key, req.InvocationID), receipts)
	if err != nil {
		return rc, err
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(nc)
	if err != nil {
		return rc, err
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return rc, err
	}
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: wire.RequestSubject(req.Key), Data: data}, jetstream.WithMsgID(ev.ID)); err != nil {
		return rc, fmt.Errorf("publish request: %w", err)
	}
	select {
	case m := <-receipts:
		var got wire.Event
		if err := json.Unmarshal(m.Data, &got); err != nil {
			return rc, err
		}
		return rc, got.DataAs(&rc)
	case <-ctx.Done():
		return rc, fmt.Errorf("wait for receipt of %s: %w", req.InvocationID, ctx.Err())
	}
}
