package eventlog

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// Call is one NATS request a Responder received: its subject and data, and the
// means to answer it once.
type Call struct{ m *nats.Msg }

// Subject is the subject the request was sent to.
func (c Call) Subject() string { return c.m.Subject }

// Data is the request's payload. It belongs to the call: keep it or a slice of it.
func (c Call) Data() []byte { return c.m.Data }

// Reply sends data as the answer to the request. A requester that stopped
// waiting gets nothing; the error is only the connection's.
func (c Call) Reply(data []byte) error { return c.m.Respond(data) }

// Responder is a queue subscription answering NATS requests (Log.Respond).
// Stop is idempotent.
type Responder struct {
	sub  *nats.Subscription
	once sync.Once
	err  error
}

// Respond subscribes handle to the requests sent to subject, in the queue group
// queue: every process that responds in the same group shares them, each request
// going to one. handle is called from the subscription's one goroutine, in the
// order the requests arrive: it must hand a call that waits on to a goroutine of
// its own. The subscription is flushed to the server before Respond returns.
//
// Calls come in and replies go out on a connection of the responders' own, not
// the log's: a NATS connection writes to the server under its one lock, so on the
// log's a reply would queue behind every append, acknowledgement and follower's
// pull the node sends, and they behind it.
func (l *Log) Respond(subject, queue string, handle func(Call)) (*Responder, error) {
	nc, err := l.calls.get(l)
	if err != nil {
		return nil, fmt.Errorf("eventlog: respond on %s: %w", subject, err)
	}
	sub, err := nc.QueueSubscribe(subject, queue, func(m *nats.Msg) { handle(Call{m}) })
	if err != nil {
		return nil, fmt.Errorf("eventlog: respond on %s: %w", subject, err)
	}
	if err := nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("eventlog: respond on %s: %w", subject, err)
	}
	return &Responder{sub: sub}, nil
}

// Stop ends the subscription: no request is handed to the handler after Stop
// returns but those it was already given. Requests sent since go to the other
// members of the queue group, or get no answer.
func (r *Responder) Stop() error {
	r.once.Do(func() {
		if err := r.sub.Unsubscribe(); err != nil && err != nats.ErrConnectionClosed {
			r.err = err
		}
	})
	return r.err
}

// callsConn is the responders' connection: opened by the first Respond, closed
// with the log (a responder stopped may still be answering the calls it took).
type callsConn struct {
	mu     sync.Mutex
	nc     *nats.Conn
	closed bool
}

func (c *callsConn) get(l *Log) (*nats.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nats.ErrConnectionClosed
	}
	if c.nc == nil {
		nc, err := l.NewConn(nats.Name("capdir-calls"), nats.MaxReconnects(-1))
		if err != nil {
			return nil, err
		}
		c.nc = nc
	}
	return c.nc, nil
}

func (c *callsConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.nc != nil {
		c.nc.Close()
	}
}
