package eventlog

import (
	"context"

	"github.com/capdir/capdir/eventlog/wire"
)

// Traceparent is the traceparent header (wire.TraceparentHeader) m was
// published with, "" when it has none. A Msg that wraps another (Unwrap) is
// asked for the one it wraps.
func Traceparent(m Msg) string { return header(m, wire.TraceparentHeader) }

// Tracestate is the tracestate header (wire.TracestateHeader) m was published
// with, "" when it has none.
func Tracestate(m Msg) string { return header(m, wire.TracestateHeader) }

// header is the header name m was published with.
func header(m Msg, name string) string {
	switch d := m.(type) {
	case *delivery:
		return d.Headers().Get(name)
	case *Redelivery:
		return d.raw.Header.Get(name)
	case interface{ Unwrap() Msg }:
		return header(d.Unwrap(), name)
	}
	return ""
}

// ReadEventsTraced reads the events at seq in stream as ReadEvents does, with
// the traceparent and tracestate headers their message was published with (""
// for none; a pack has none: its events carry their trace in their data).
func (l *Log) ReadEventsTraced(ctx context.Context, stream string, seq uint64) (evs []Stored, traceparent, tracestate string, err error) {
	m, err := l.ReadRaw(ctx, stream, seq)
	if err != nil {
		return nil, "", "", err
	}
	evs = storedEvents(stream, m.Subject, m.Sequence, m.Data)
	return evs, m.Header.Get(wire.TraceparentHeader), m.Header.Get(wire.TracestateHeader), nil
}
