package eventlog

import "github.com/capdir/capdir/eventlog/wire"

// Stored is an event read back from the log with its position.
type Stored struct {
	wire.Event
	Stream  string
	Subject string
	Seq     uint64
	// Part is the event's place in its message and Parts how many events the
	// message holds: 0 and 1 for a message of one event (Parts is 0 where a
	// Stored is made by hand, and means the same). The events of a pack (see
	// Packed) share its Seq, each at its Part, 0 to Parts-1.
	Part, Parts int
	// Invalid is set, and Event left empty, when the message is not a valid envelope.
	Invalid string

	// buf is the buffer a transient follower decompressed the pack into, on
	// the pack's last event (packReader).
	buf *[]byte
}

// More reports whether more events of s's message follow it.
func (s *Stored) More() bool { return s.Part+1 < s.Parts }
