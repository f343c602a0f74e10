package eventlog

import "errors"

var (
	// ErrConflict is returned by Append when an expected last subject sequence was
	// given and the subject has moved on: another writer got there first.
	ErrConflict = errors.New("eventlog: conflict: the key was changed by another writer")
	// ErrNotReady is returned when JetStream does not answer within the start timeout.
	ErrNotReady = errors.New("eventlog: jetstream not ready")
	// ErrClosed is returned by operations on a closed Log.
	ErrClosed = errors.New("eventlog: closed")
	// ErrStreamNotFound is returned by State when the stream does not exist: it was
	// deleted under the log.
	ErrStreamNotFound = errors.New("eventlog: stream not found")
)
