package eventlog

import "github.com/capdir/capdir/eventlog/wire"

// Traceparent is the traceparent header (wire.TraceparentHeader) m was
// published with, "" when it has none. A Msg that wraps another (Unwrap) is
// asked for the one it wraps.
func Traceparent(m Msg) string {
	switch d := m.(type) {
	case *delivery:
		return d.Headers().Get(wire.TraceparentHeader)
	case *Redelivery:
		return d.raw.Header.Get(wire.TraceparentHeader)
	case interface{ Unwrap() Msg }:
		return Traceparent(d.Unwrap())
	}
	return ""
}
