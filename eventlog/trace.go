package eventlog

// TraceparentHeader is the NATS header a bus client's request may carry its W3C
// trace context in (the HTTP header's name).
const TraceparentHeader = "traceparent"

// Traceparent is the traceparent header m was published with, "" when it has
// none. A Msg that wraps another (Unwrap) is asked for the one it wraps.
func Traceparent(m Msg) string {
	switch d := m.(type) {
	case delivery:
		return d.Headers().Get(TraceparentHeader)
	case *Redelivery:
		return d.raw.Header.Get(TraceparentHeader)
	case interface{ Unwrap() Msg }:
		return Traceparent(d.Unwrap())
	}
	return ""
}
