package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NewBusRequest builds the INVOCATION_REQUESTED event the bus client named client
// publishes to BusRequestSubject(client, key), with fresh invocation and trace ids,
// attributed to ClientActor(client) (the worker takes the actor from the subject
// anyway).
func NewBusRequest(client, key, body string, now time.Time) (subject string, ev Event, req InvocationRequest, err error) {
	return busRequest(client, InvocationRequest{Key: key, Body: body}, now)
}

// busRequest completes req as client's request: its actor, ids and event.
func busRequest(client string, req InvocationRequest, now time.Time) (string, Event, InvocationRequest, error) {
	if err := CheckClientName(client); err != nil {
		return "", Event{}, req, err
	}
	req.Credential = ClientActor(client)
	ev, err := PrepareRequest(now, &req)
	return BusRequestSubject(client, req.Key), ev, req, err
}

// PrepareRequest checks req's key, mints the invocation and trace ids it lacks, and
// builds its INVOCATION_REQUESTED event with the credential as actor. Every request
// capdir or a bus client appends is built here. A minted invocation id is
// RequestInvocationID of the event id, so a worker tells it from one the caller
// chose (Chosen) without looking anything up.
func PrepareRequest(now time.Time, req *InvocationRequest) (Event, error) {
	if !ValidKey(req.Key) {
		return Event{}, fmt.Errorf("%w: %q must be 1 to %d characters from A-Z, a-z, 0-9, '_' and '-'", ErrBadKey, req.Key, MaxKeyLen)
	}
	id := newULID(now).String()
	if req.InvocationID == "" {
		req.InvocationID = RequestInvocationID(id)
	}
	if req.Trace == "" {
		req.Trace = NewTrace()
	}
	return newRequestEvent(id, now.UTC(), req.Credential, req)
}

// Invoke is a bus client's whole invocation: subscribe to the receipt notice
// subject, publish the request into the log on the client's own request subject
// (waiting for JetStream's ack), and wait for the receipt. client is the name the
// client's credential was made for (capdir bus add-client NAME); nc must be
// connected with that credential and wire.ClientOptions(client), else Invoke
// returns an error matching ErrInboxPrefix before publishing anything. It needs
// nothing else of capdir's. A program making many calls uses a Client instead,
// which subscribes to its notices once rather than for every call.
func Invoke(ctx context.Context, nc *nats.Conn, client, key, body string, opts ...InvokeOption) (Receipt, error) {
	var rc Receipt
	subject, ev, req, err := invokeRequest(client, key, body, opts)
	if err != nil {
		return rc, err
	}
	if err := checkInbox(nc, client); err != nil {
		return rc, err
	}
	// One receipt is expected: a channel of one, not SubscribeSync's default
	// 64k-slot buffer (half a megabyte allocated per call).
	receipts := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe(ReceiptNoticeSubject(client, key, req.InvocationID), receipts)
	if err != nil {
		return rc, err
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(nc)
	if err != nil {
		return rc, err
	}
	return publishAndWait(ctx, nc, js, client, subject, ev, &req, receipts)
}

// invokeRequest is an invocation's request as Invoke and Client.Invoke send it:
// the options applied (an invalid one refused before anything else), the ids
// minted, the subject and event built.
func invokeRequest(client, key, body string, opts []InvokeOption) (string, Event, InvocationRequest, error) {
	var o invokeOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return "", Event{}, InvocationRequest{}, err
		}
	}
	if o.tracestate != "" && o.traceparent == "" {
		return "", Event{}, InvocationRequest{}, fmt.Errorf("%w: WithTracestate needs WithTraceparent: a tracestate belongs to a trace", ErrBadOption)
	}
	return busRequest(client, InvocationRequest{InvocationID: o.invocationID, Key: key, Body: body, Token: o.token,
		Traceparent: o.traceparent, Tracestate: o.tracestate}, time.Now())
}

// publishError says why a request was not acknowledged. The server refuses a
// publish outside the client's permissions without a reply, so the publish only
// times out; the refusal itself arrives as the connection's last error.
func publishError(nc *nats.Conn, client, subject string, err error) error {
	if last := nc.LastError(); errors.Is(last, nats.ErrPermissionViolation) && strings.Contains(last.Error(), subject) {
		return fmt.Errorf("%w: publish request on %s: the server refused it (%v): is %q the client this credential was made for? "+
			"(capdir bus list shows the names)", ErrRefused, subject, last, client)
	}
	return fmt.Errorf("publish request on %s: %w", subject, err)
}
