package wire

import "fmt"

// TraceparentHeader is the NATS header, named as the W3C HTTP header, that
// carries a bus request's trace context.
const TraceparentHeader = "traceparent"

// MaxTraceparentLen bounds a traceparent value; capdir ignores a longer one.
const MaxTraceparentLen = 256

// TracestateHeader is the NATS header, named as the W3C HTTP header, that
// carries a bus request's tracestate beside its traceparent.
const TracestateHeader = "tracestate"

// MaxTracestateLen bounds a tracestate value (the W3C Trace Context limit a
// platform must propagate); capdir drops a longer one.
const MaxTracestateLen = 512

// WithTraceparent sends the request in the W3C trace whose traceparent value is
// tp ("00-<32 hex trace id>-<16 hex span id>-<2 hex flags>"), in the
// traceparent NATS header and the request's traceparent field: a node that
// traces continues that trace, and the receipt carries its trace id. A value
// that is not a valid traceparent is ignored by the node (the call gets a trace
// of its own), never refused; one that is empty, over MaxTraceparentLen bytes,
// or holds a byte outside printable ASCII is refused here.
func WithTraceparent(tp string) InvokeOption {
	return func(o *invokeOptions) error {
		if tp == "" || len(tp) > MaxTraceparentLen {
			return fmt.Errorf("%w: WithTraceparent needs a traceparent of 1 to %d bytes, got %d", ErrBadOption, MaxTraceparentLen, len(tp))
		}
		for i := 0; i < len(tp); i++ {
			if c := tp[i]; c <= ' ' || c >= 0x7f {
				return fmt.Errorf("%w: WithTraceparent: a traceparent is printable ASCII without spaces (byte %d is %q)", ErrBadOption, i, c)
			}
		}
		o.traceparent = tp
		return nil
	}
}
