package wire

import "fmt"

// InvokeOption adjusts one Invoke call. Options check their values and Invoke
// returns their error before it publishes anything.
type InvokeOption func(*invokeOptions) error

type invokeOptions struct {
	token        string
	invocationID string
	traceparent  string
	tracestate   string
}

// MaxTokenLen bounds the capability token a request may carry.
const MaxTokenLen = 8 << 10

// WithToken sends a capability token with the request (InvocationRequest.Token): a
// bus client is never the owner, so the gate runs a request only with a token that
// passes its checks. The token is a compact JWT: printable ASCII without spaces, at
// most MaxTokenLen bytes.
func WithToken(token string) InvokeOption {
	return func(o *invokeOptions) error {
		if token == "" || len(token) > MaxTokenLen {
			return fmt.Errorf("%w: WithToken needs a capability token of 1 to %d bytes, got %d", ErrBadOption, MaxTokenLen, len(token))
		}
		for i := 0; i < len(token); i++ {
			if c := token[i]; c <= ' ' || c >= 0x7f {
				return fmt.Errorf("%w: WithToken: a capability token is printable ASCII without spaces (byte %d is %q)", ErrBadOption, i, c)
			}
		}
		o.token = token
		return nil
	}
}

// WithInvocationID makes id the request's invocation id instead of a fresh one, so
// that the call runs once however often it is sent: a request under an id this
// client already used is not run again, and is answered with the first request's
// receipt (sent again on the client's notice subject), however long after the
// first (as long as capdir holds the receipt). A request under the same id with
// another key or body is refused with an error matching
// ErrInvocationIDReused (with ErrRepeatRefused and the gate's refusal when its
// token could not make it); the same request with a token that would not let the
// client make the call now (revoked, out of scope, …) gets the gate's refusal,
// an error matching ErrRepeatRefused, not the first receipt, and with a token
// of another subject than the first call's, ErrInvocationIDReused. id is InvocationPrefix and 1 to MaxChosenIDLen characters
// of A-Z a-z 0-9 _ - (NewInvocationID makes one); choose ids no other client can
// guess: a request under an id another sender used first is this client's own
// call, run under the id scoped to it (ScopedInvocationID), whose receipt carries
// that id, so it tells that the id was taken, nothing of the other's call.
func WithInvocationID(id string) InvokeOption {
	return func(o *invokeOptions) error {
		if err := CheckInvocationID(id); err != nil {
			return fmt.Errorf("%w: WithInvocationID: %w", ErrBadOption, err)
		}
		o.invocationID = id
		return nil
	}
}
