package projector

import "errors"

var (
	// ErrNotFound is returned by queries for a key or invocation that is not projected.
	ErrNotFound = errors.New("projector: not found")
	// ErrClosed is returned by operations on a closed projector.
	ErrClosed = errors.New("projector: closed")
	// ErrKilled is returned by a test hook to abandon a batch before it commits,
	// as a crash at that point would.
	ErrKilled = errors.New("projector: killed before commit")
)
