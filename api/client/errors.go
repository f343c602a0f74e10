package client

import (
	"errors"
	"fmt"
)

// ErrPending: the invocation has a request and no receipt yet; ask again later.
var ErrPending = errors.New("pending: the invocation has no receipt yet")

// Error is an answer outside 2xx.
type Error struct {
	Method, Path string
	Status       int
	// Message is the server's "error" text when it sent one, else the body.
	Message string
	// Body is the whole answer, e.g. an unknown key's refusal with did_you_mean.
	Body []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

// TransportError is a request that got no answer: the server could not be reached,
// the connection broke, or the context ended first.
type TransportError struct {
	Method, Path string
	Err          error
}

func (e *TransportError) Error() string { return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err) }
func (e *TransportError) Unwrap() error { return e.Err }
