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
	// ErrDiskFull is returned by every append while the log's disk is full (the
	// embedded server's store found no space, or the servers refuse appends for
	// lack of storage): nothing was stored. The embedded log takes writes again by
	// itself once its disk has room (see DiskRoom).
	ErrDiskFull = errors.New("eventlog: the log's disk is full")
	// ErrElecting is returned by an append that no server answered for its stream
	// within Config.ElectionWait (the stream has no leader: an election runs):
	// nothing was stored, and the same append may be sent again.
	ErrElecting = errors.New("eventlog: the log is electing a leader")
	// ErrConnectionLost is returned by an async append whose connection to the
	// log's server was lost before its acknowledgement came: the event may or may
	// not be stored. Sending it again is safe when the log's duplicate detection
	// knows its id (not after WithoutDedupe).
	ErrConnectionLost = errors.New("eventlog: the connection to the log's server was lost before the append was acknowledged")
	// ErrNotAdmitted is returned by Open when the servers of Config.NATSURL refuse
	// capdir's connection: no credential, or one their configuration does not
	// admit.
	ErrNotAdmitted = errors.New("eventlog: the NATS servers refused capdir's connection")
	// ErrCreds is returned when the credential file for an external cluster
	// (Config.Creds) cannot be used.
	ErrCreds = errors.New("eventlog: bad NATS credential file")
)
