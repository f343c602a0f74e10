package wire

import "fmt"

// InvokeOption adjusts one Invoke call. Options check their values and Invoke
// returns their error before it publishes anything.
type InvokeOption func(*invokeOptions) error

type invokeOptions struct {
	token string
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
