package wire

import "errors"

var (
	// ErrBadEvent is returned when a message is not a valid envelope.
	ErrBadEvent = errors.New("wire: bad event")
	// ErrBadKey is returned for a key that is not 1 to MaxKeyLen characters of
	// A-Z a-z 0-9 _ -.
	ErrBadKey = errors.New("wire: bad key")
)
