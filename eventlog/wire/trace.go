package wire

import (
	"fmt"

	"github.com/nats-io/nats.go"
)

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

// WithTracestate sends ts, the W3C tracestate of the trace WithTraceparent names
// (vendor data, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"), with the request, in
// the tracestate NATS header and the request's tracestate field: a node passes
// it on with the trace, to the row's upstream among others. It needs
// WithTraceparent: without one the call is refused here. A value that is not a
// valid tracestate is dropped by the node (the trace goes on without it), never
// refused; one that is empty, over MaxTracestateLen bytes, or holds a byte
// outside printable ASCII (a space aside) is refused here.
func WithTracestate(ts string) InvokeOption {
	return func(o *invokeOptions) error {
		if ts == "" || len(ts) > MaxTracestateLen {
			return fmt.Errorf("%w: WithTracestate needs a tracestate of 1 to %d bytes, got %d", ErrBadOption, MaxTracestateLen, len(ts))
		}
		for i := 0; i < len(ts); i++ {
			if c := ts[i]; c < ' ' || c >= 0x7f {
				return fmt.Errorf("%w: WithTracestate: a tracestate is printable ASCII (byte %d is %q)", ErrBadOption, i, c)
			}
		}
		o.tracestate = ts
		return nil
	}
}

// traceHeader is the NATS header that carries req's trace context: nil when it
// has no traceparent.
func traceHeader(req *InvocationRequest) nats.Header {
	if req.Traceparent == "" {
		return nil
	}
	h := nats.Header{TraceparentHeader: []string{req.Traceparent}}
	if req.Tracestate != "" {
		h[TracestateHeader] = []string{req.Tracestate}
	}
	return h
}
