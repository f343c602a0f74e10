package eventlog

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Redelivery is a message a durable consumer delivered to an earlier process,
// taken up again from what that process recorded of the delivery: the message as
// the stream stores it, answered on the earlier delivery's acknowledgement
// subject. It is a Msg; Claim tells the consumer it is held again.
type Redelivery struct {
	nc        *nats.Conn
	raw       *jetstream.RawStreamMsg
	reply     string
	delivered uint64
	claimed   time.Time
}

// ReadDelivery reads message seq of stream for the delivery whose acknowledgement
// subject is reply (a JetStream ack subject, as Msg.Reply gave it) and that was
// the delivered-th delivery of the message.
func (l *Log) ReadDelivery(ctx context.Context, stream string, seq uint64, reply string, delivered uint64) (*Redelivery, error) {
	raw, err := l.ReadRaw(ctx, stream, seq)
	if err != nil {
		return nil, err
	}
	return &Redelivery{nc: l.nc, raw: raw, reply: reply, delivered: delivered}, nil
}

// Claim sends a progress for the delivery as a request, so that an answer means
// the consumer's server heard it and began the delivery's ack wait again.
func (m *Redelivery) Claim(ctx context.Context) error {
	m.claimed = time.Now()
	_, err := m.nc.RequestWithContext(ctx, m.reply, ackProgress)
	return err
}

// Claimed is when Claim was last sent: the ack wait began again no earlier.
func (m *Redelivery) Claimed() time.Time { return m.claimed }

var (
	ackAck      = []byte("+ACK")
	ackNak      = []byte("-NAK")
	ackProgress = []byte("+WPI")
	ackTerm     = []byte("+TERM")
)

func (m *Redelivery) Metadata() (*MsgMetadata, error) {
	return &MsgMetadata{StreamSeq: m.raw.Sequence, NumDelivered: m.delivered, Timestamp: m.raw.Time}, nil
}

func (m *Redelivery) Subject() string   { return m.raw.Subject }
func (m *Redelivery) Data() []byte      { return m.raw.Data }
func (m *Redelivery) ID() string        { return m.raw.Header.Get(jetstream.MsgIDHeader) }
func (m *Redelivery) Reply() string     { return m.reply }
func (m *Redelivery) Ack() error        { return m.nc.Publish(m.reply, ackAck) }
func (m *Redelivery) Nak() error        { return m.nc.Publish(m.reply, ackNak) }
func (m *Redelivery) InProgress() error { return m.nc.Publish(m.reply, ackProgress) }
func (m *Redelivery) Term() error       { return m.nc.Publish(m.reply, ackTerm) }

func (m *Redelivery) NakWithDelay(d time.Duration) error {
	return m.nc.Publish(m.reply, fmt.Appendf(nil, "%s {\"delay\": %d}", ackNak, d.Nanoseconds()))
}
