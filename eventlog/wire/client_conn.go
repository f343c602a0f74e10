package wire

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Client is a bus client that makes many invocations on one connection: it
// subscribes to its receipt notices once (ReceiptNotices) and hands each notice to
// the call waiting for it, where Invoke subscribes and unsubscribes for every call.
// Safe for concurrent use; Close ends the subscription and fails the calls still
// waiting.
type Client struct {
	nc     *nats.Conn
	name   string
	js     jetstream.JetStream
	sub    *nats.Subscription
	prefix string // ReceiptNotices(name) without its '>'

	mu      sync.Mutex
	waiting map[string][]chan *nats.Msg // invocation id -> the calls waiting for it
	closed  bool
}

// NewClient makes the bus client named client on nc, connected with that client's
// credential and ClientOptions(client) (else an error matching ErrInboxPrefix).
// The subscription is flushed to the server before NewClient returns. Under a
// name that is not the credential's, the server refuses the subscription as it
// refuses the publishes: Invoke then says so (ErrRefused) at its deadline.
func NewClient(nc *nats.Conn, client string) (*Client, error) {
	if err := CheckClientName(client); err != nil {
		return nil, err
	}
	if err := checkInbox(nc, client); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, name: client, js: js, waiting: map[string][]chan *nats.Msg{},
		prefix: strings.TrimSuffix(ReceiptNotices(client), ">")}
	c.sub, err = nc.Subscribe(ReceiptNotices(client), c.notice)
	if err != nil {
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		c.sub.Unsubscribe()
		return nil, err
	}
	return c, nil
}

// notice hands a receipt notice to the calls waiting for its invocation id (the
// subject's last token: several, when calls repeat one chosen id); a notice
// nobody waits for (a call that gave up, another connection's call under the same
// client name) is dropped.
func (c *Client) notice(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, c.prefix)
	inv := rest[strings.LastIndexByte(rest, '.')+1:]
	c.mu.Lock()
	chs := c.waiting[inv]
	delete(c.waiting, inv)
	c.mu.Unlock()
	for _, ch := range chs {
		ch <- m // buffered: one notice per waiting call
	}
}

// Close unsubscribes; calls still waiting fail with their context or ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	waiting := c.waiting
	c.waiting = map[string][]chan *nats.Msg{}
	c.mu.Unlock()
	for _, chs := range waiting {
		for _, ch := range chs {
			close(ch)
		}
	}
	return c.sub.Unsubscribe()
}

// Invoke is one invocation: publish the request into the log on the client's own
// request subject (waiting for JetStream's ack), and wait for its receipt notice.
// The options are Invoke's.
func (c *Client) Invoke(ctx context.Context, key, body string, opts ...InvokeOption) (Receipt, error) {
	var rc Receipt
	subject, ev, req, err := invokeRequest(c.name, key, body, opts)
	if err != nil {
		return rc, err
	}
	ch := make(chan *nats.Msg, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return rc, ErrClientClosed
	}
	c.waiting[req.InvocationID] = append(c.waiting[req.InvocationID], ch)
	c.mu.Unlock()
	defer c.forget(req.InvocationID, ch)
	return publishAndWait(ctx, c.nc, c.js, c.name, subject, ev, &req, ch)
}

// publishAndWait publishes a bus request's event and waits for its notice on ch.
func publishAndWait(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, client, subject string, ev Event, req *InvocationRequest, ch <-chan *nats.Msg) (Receipt, error) {
	var rc Receipt
	data, err := Encode(&ev)
	if err != nil {
		return rc, err
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: traceHeader(req)}
	if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(ev.ID)); err != nil {
		return rc, publishError(nc, client, subject, err)
	}
	var m *nats.Msg
	select {
	case m = <-ch:
	case <-ctx.Done():
		return rc, fmt.Errorf("wait for receipt of %s: %w", req.InvocationID, ctx.Err())
	}
	if m == nil {
		return rc, fmt.Errorf("wait for receipt of %s: %w", req.InvocationID, ErrClientClosed)
	}
	return answerOf(m.Data, req)
}

// forget drops a call that stopped waiting.
func (c *Client) forget(inv string, ch chan *nats.Msg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	chs := slices.DeleteFunc(c.waiting[inv], func(w chan *nats.Msg) bool { return w == ch })
	if len(chs) == 0 {
		delete(c.waiting, inv)
	} else {
		c.waiting[inv] = chs
	}
}
