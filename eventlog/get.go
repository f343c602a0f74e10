package eventlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoMessage is returned by ReadSeq when the stream holds no message at the
// sequence: it was never appended, or retention removed it.
var ErrNoMessage = errors.New("eventlog: no message at that sequence")

// ReadSeq reads the one event at seq in stream, asking the log itself. A message
// that is not an event envelope is returned with Invalid set, as Read does, and
// so is a pack (its events are read with ReadEvents).
func (l *Log) ReadSeq(ctx context.Context, stream string, seq uint64) (Stored, error) {
	m, err := l.ReadRaw(ctx, stream, seq)
	if err != nil {
		return Stored{}, err
	}
	if wire.IsPackSubject(m.Subject) {
		return Stored{Stream: stream, Subject: m.Subject, Seq: m.Sequence, Invalid: "a pack of several events: read them with ReadEvents"}, nil
	}
	return newStored(stream, m.Subject, m.Sequence, m.Data), nil
}

// ReadEvents reads the events of the message at seq in stream, asking the log
// itself: the one event of most messages, each of a pack's (see Packed).
func (l *Log) ReadEvents(ctx context.Context, stream string, seq uint64) ([]Stored, error) {
	m, err := l.ReadRaw(ctx, stream, seq)
	if err != nil {
		return nil, err
	}
	return storedEvents(stream, m.Subject, m.Sequence, m.Data), nil
}

// ReadRaw reads the message at seq in stream as stored, headers included.
func (l *Log) ReadRaw(ctx context.Context, stream string, seq uint64) (*jetstream.RawStreamMsg, error) {
	s, ok := l.streams[stream]
	if !ok {
		return nil, fmt.Errorf("eventlog: unknown stream %q", stream)
	}
	m, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: %s %d", ErrNoMessage, stream, seq)
	}
	if err != nil {
		return nil, fmt.Errorf("eventlog: message %d of %s: %w", seq, stream, err)
	}
	return m, nil
}
