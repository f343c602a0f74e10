package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NewRequest builds the INVOCATION_REQUESTED event a bus client publishes to
// RequestSubject(key), with fresh invocation and trace ids. actor names the
// client (for example "nats:billing-service").
func NewRequest(key, body, actor string, now time.Time) (subject string, ev Event, req InvocationRequest, err error) {
	req = InvocationRequest{Key: key, Body: body, Credential: actor}
	ev, err = PrepareRequest(now, &req)
	return RequestSubject(key), ev, req, err
}

// PrepareRequest checks req's key, mints the invocation and trace ids it lacks, and
// builds its INVOCATION_REQUESTED event with the credential as actor. Every request
// capdir or a bus client appends is built here.
func PrepareRequest(now time.Time, req *InvocationRequest) (Event, error) {
	if !ValidKey(req.Key) {
		return Event{}, fmt.Errorf("%w: %q must be 1 to %d characters from A-Z, a-z, 0-9, '_' and '-'", ErrBadKey, req.Key, MaxKeyLen)
	}
	if req.InvocationID == "" {
		req.InvocationID = NewInvocationID(now)
	}
	if req.Trace == "" {
		req.Trace = NewTrace()
	}
	return NewEvent(now, TypeInvocationRequested, req.Credential, *req)
}

// Invoke is a bus client's whole invocation: subscribe to the receipt notice
// subject, publish the request into the log (waiting for JetStream's ack), and wait
// for the receipt. It needs only a NATS connection to the cluster capdir uses.
func Invoke(ctx context.Context, nc *nats.Conn, key, body, actor string) (Receipt, error) {
	var rc Receipt
	subject, ev, req, err := NewRequest(key, body, actor, time.Now())
	if err != nil {
		return rc, err
	}
	// One receipt is expected: a channel of one, not SubscribeSync's default
	// 64k-slot buffer (half a megabyte allocated per call).
	receipts := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe(ReceiptNoticeSubject(key, req.InvocationID), receipts)
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
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data}, jetstream.WithMsgID(ev.ID)); err != nil {
		return rc, fmt.Errorf("publish request: %w", err)
	}
	var m *nats.Msg
	select {
	case m = <-receipts:
	case <-ctx.Done():
		return rc, fmt.Errorf("wait for receipt of %s: %w", req.InvocationID, ctx.Err())
	}
	var got Event
	if err := json.Unmarshal(m.Data, &got); err != nil {
		return rc, err
	}
	err = got.DataAs(&rc)
	return rc, err
}
