package eventlog

import (
	"context"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Durable is a durable consumer's settings: its name, the subjects of the stream it
// takes, and how long a delivered message may stay unacknowledged (AckWait), how
// often it is delivered at most (MaxDeliver) and how many may be out at once
// (MaxAckPending). Every message is acknowledged one by one, from the stream's
// start.
type Durable struct {
	Name          string
	Subjects      []string
	AckWait       time.Duration
	MaxDeliver    int
	MaxAckPending int
}

// Consumer is a durable consumer of one stream, from OpenDurable.
type Consumer struct {
	l            *Log
	stream, name string
	ackWait      time.Duration
	c            jetstream.Consumer
}

// Consumption is a Consumer's delivery under way: Drain ends it once what was
// pulled is handed over, Closed is ready after that.
type Consumption interface {
	Drain()
	Closed() <-chan struct{}
}

// OpenDurable creates the durable consumer d of stream, or joins it with d's
// settings when it exists.
func (l *Log) OpenDurable(ctx context.Context, stream string, d Durable) (*Consumer, error) {
	c, err := l.js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:        d.Name,
		FilterSubjects: d.Subjects,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        d.AckWait,
		MaxDeliver:     d.MaxDeliver,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		MaxAckPending:  d.MaxAckPending,
	})
	if err != nil {
		return nil, err
	}
	return &Consumer{l: l, stream: stream, name: d.Name, ackWait: d.AckWait, c: c}, nil
}

// Backlog is what the consumer counted when opened: the messages delivered and not
// acknowledged, the stream sequence every message up to which is acknowledged, and
// the pulls waiting on it (another consumer of the same name is running).
func (c *Consumer) Backlog() (unacked int, ackFloor uint64, waiting int) {
	info := c.c.CachedInfo()
	if info == nil {
		return 0, 0, 0
	}
	return info.NumAckPending, info.AckFloor.Stream, info.NumWaiting
}

// Reset sets the consumer back to its acknowledgement floor: every message after
// it is delivered again, at once.
func (c *Consumer) Reset(ctx context.Context) error {
	_, err := c.l.js.ResetConsumer(ctx, c.stream, c.name)
	return err
}

// Consume delivers the consumer's messages to h, pulling up to batch at a time in
// the pulls every reader of the log makes (PullExpiry, PullHeartbeat). A pack is
// delivered as its events, one call of h each (Parts); while some of them wait
// to be taken (Taken), the consumption keeps the pack in progress every quarter
// of the consumer's AckWait, and once all are, their handlers keep it.
func (c *Consumer) Consume(batch int, h func(Msg)) (Consumption, error) {
	open := newOpenPacks(c.ackWait / 4)
	cc, err := c.c.Consume(func(m jetstream.Msg) {
		d := &delivery{Msg: m}
		if !wire.IsPackSubject(m.Subject()) {
			h(d)
			return
		}
		for _, pt := range parts(d, open) {
			h(pt)
		}
	}, jetstream.PullMaxMessages(batch), jetstream.PullExpiry(PullExpiry), jetstream.PullHeartbeat(PullHeartbeat))
	if err != nil {
		return nil, err
	}
	if c.ackWait > 0 {
		go open.keep(cc.Closed())
	}
	return cc, nil
}

// consumerLeaderElected is the subject of JetStream's announcement that a
// consumer has a new leader; the last two tokens are the stream's and the
// consumer's names.
const consumerLeaderElected = "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED."

// WatchLeader calls fn whenever JetStream announces that the consumer elected a
// leader, until stop is called. fn runs on the connection's callback goroutine
// and must not block. Like WatchStreams' advisories, one can be missed, and a
// connection that may not subscribe to advisories gets an error. When only the
// flush that confirms the subscription fails, stop comes with the error: the
// subscription holds, and may hear an election once the connection is back.
func (c *Consumer) WatchLeader(fn func()) (stop func(), err error) {
	sub, err := c.l.nc.Subscribe(consumerLeaderElected+c.stream+"."+c.name, func(*nats.Msg) { fn() })
	if err != nil {
		return nil, err
	}
	return func() { sub.Unsubscribe() }, c.l.nc.Flush()
}

// ConsumerState is a consumer's state as its leader reports it now.
type ConsumerState struct {
	// Leader is the server that leads the consumer's replicas, and LeaderSince
	// when it was elected; LeaderSince is zero for a consumer that is not
	// replicated (one server, no elections), or whose leader is unknown.
	Leader      string
	LeaderSince time.Time
	// AckFloor is the stream sequence up to which every message is acknowledged.
	AckFloor uint64
}

// State asks the consumer's leader for its state.
func (c *Consumer) State(ctx context.Context) (ConsumerState, error) {
	info, err := c.c.Info(ctx)
	if err != nil {
		return ConsumerState{}, err
	}
	st := ConsumerState{AckFloor: info.AckFloor.Stream}
	if ci := info.Cluster; ci != nil {
		st.Leader = ci.Leader
		if ci.LeaderSince != nil {
			st.LeaderSince = *ci.LeaderSince
		}
	}
	return st, nil
}
