package eventlog

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Msg is one message a durable consumer delivered (Consumer.Consume): what it
// carries, where the stream stored it, and the answers the consumer takes for it.
// Every answer is a message to the consumer's server; an error means it was not
// sent, and the message is delivered again after the consumer's AckWait.
type Msg interface {
	Subject() string
	Data() []byte
	// Reply is the delivery's acknowledgement subject: where its answers go.
	Reply() string
	// ID is the id the message was appended under (the log's duplicate
	// detection), empty when it has none.
	ID() string
	// Metadata is where and when the stream stored the message, and how often it
	// has been delivered.
	Metadata() (*MsgMetadata, error)
	// Ack marks the message done: it is not delivered again.
	Ack() error
	// Nak asks for the message to be delivered again at once; NakWithDelay after d.
	Nak() error
	NakWithDelay(d time.Duration) error
	// InProgress resets the message's AckWait: it is not delivered elsewhere yet.
	InProgress() error
	// Term ends the message's deliveries without it being done.
	Term() error
}

// MsgMetadata is a delivered message's place in its stream.
type MsgMetadata struct {
	// StreamSeq is the message's sequence in its stream.
	StreamSeq uint64
	// NumDelivered counts the deliveries of the message, this one included.
	NumDelivered uint64
	// Timestamp is when the stream stored the message.
	Timestamp time.Time
}

// delivery is a Msg from JetStream. Its metadata is parsed once, by the first
// Metadata (a delivery is handled by one goroutine at a time).
type delivery struct {
	jetstream.Msg
	md    *MsgMetadata
	mdErr error
}

func (d *delivery) ID() string { return d.Headers().Get(jetstream.MsgIDHeader) }

func (d *delivery) Metadata() (*MsgMetadata, error) {
	if d.md == nil && d.mdErr == nil {
		md, err := d.Msg.Metadata()
		if err != nil {
			d.mdErr = err
		} else {
			d.md = &MsgMetadata{StreamSeq: md.Sequence.Stream, NumDelivered: md.NumDelivered, Timestamp: md.Timestamp}
		}
	}
	return d.md, d.mdErr
}

// Ack is the stream's acknowledgement of an append (Pending.Stored): the stream
// and sequence it was stored at.
type Ack = jetstream.PubAck

// ErrMaxPayload is the error of an append whose message is over the connection's
// largest payload (Log.MaxPayload); TooLarge reports it.
var ErrMaxPayload = nats.ErrMaxPayload

// jsMessageTooLarge is the JetStream error code of a message over the stream's
// largest message.
const jsMessageTooLarge = jetstream.JSErrCodeStreamMessageExceedsMaximum

// TooLarge reports whether err is an append's refusal of a message too large for
// the connection or the stream: sending it again cannot succeed.
func TooLarge(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrMaxPayload) || errors.As(err, &apiErr) && apiErr.ErrorCode == jsMessageTooLarge
}

// BadSubject reports whether err is an append's refusal of its subject as not a
// valid NATS subject: sending it again cannot succeed.
func BadSubject(err error) bool { return errors.Is(err, nats.ErrBadSubject) }
