package eventlog

import "github.com/capdir/capdir/eventlog/wire"

// Stored is an event read back from the log with its position.
type Stored struct {
	wire.Event
	Stream  string
	Subject string
	Seq     uint64
	// Invalid is set, and Event left empty, when the message is not a valid envelope.
	Invalid string
}
