package ownerkey

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrWrongKey: the presented key is not the owner key (it was counted
	// against its address).
	ErrWrongKey = errors.New("wrong owner key")
	// ErrThrottled: the address guessed wrong too often; the key was not
	// compared. The concrete error is a *ThrottledError.
	ErrThrottled = errors.New("too_many_wrong_keys")
)

// ThrottledError is a key refused because its address sent Limit wrong keys
// within Window. Its message is the HTTP answer's how_to_fix.
type ThrottledError struct {
	Limit      int
	Window     time.Duration
	RetryAfter time.Duration // how long the address must still wait, whole seconds
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%d wrong owner keys from this address within %v: wait %v, then send the owner key in the x-terminal-key header "+
		"(check CAPDIR_TERMINAL_KEY, --key-file or the data dir's terminal.key)", e.Limit, e.Window, e.RetryAfter)
}

// Unwrap returns ErrThrottled.
func (e *ThrottledError) Unwrap() error { return ErrThrottled }

// RetryAfterSeconds is the Retry-After header's value.
func (e *ThrottledError) RetryAfterSeconds() int { return int(e.RetryAfter / time.Second) }

// Body is the 429's JSON answer, {"error":"too_many_wrong_keys","how_to_fix":…},
// the one both the HTTP facade and /mcp send.
func (e *ThrottledError) Body() map[string]string {
	return map[string]string{"error": ErrThrottled.Error(), "how_to_fix": e.Error()}
}
