package breaker

import "errors"

var (
	// ErrOpen matches every refusal by an open breaker (see OpenError).
	ErrOpen = errors.New("breaker open")
	// ErrInvalidConfig matches every problem reported by Config.Validate.
	ErrInvalidConfig = errors.New("invalid breaker config")
)

// OpenError is the refusal of a call to an open breaker. Its Error is Message(Key,
// Threshold) and it matches ErrOpen.
type OpenError struct {
	Key       string
	Threshold int
}

func (e *OpenError) Error() string { return Message(e.Key, e.Threshold) }

// Unwrap returns ErrOpen.
func (e *OpenError) Unwrap() error { return ErrOpen }
