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
	// ErrBusClient is returned for a bus identity record or request that is not
	// valid: a bad name, key, role or subject.
	ErrBusClient = errors.New("eventlog: bad bus client")
	// ErrBusClientExists is returned by AddBusClient for a name already recorded.
	ErrBusClientExists = errors.New("eventlog: bus client exists")
	// ErrNoBusClient is returned by RemoveBusClient for a name not recorded.
	ErrNoBusClient = errors.New("eventlog: no such bus client")
	// ErrCreds is returned when the credential file for an external cluster
	// (Config.Creds) cannot be used.
	ErrCreds = errors.New("eventlog: bad NATS credential file")
)
