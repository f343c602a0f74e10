package eventlog

import (
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
)

// Packs (wire.Unpack): several of capdir's own appends to the data stream made
// at about the same time may share one message (Packed, packer.go). Every
// reader of the log sees a pack's events one by one, in order, each with its
// own subject, at the pack's sequence with its place in it (Stored.Part); a
// pack is never split between two batches, so a checkpoint at its sequence
// covers all of it. An event whose subject is not one a pack of that subject
// may carry is read as not valid (Stored.Invalid), and so is the whole message
// when it is not a pack.

// storedEvents are the events of the message at seq on subject: one, or each
// of a pack's. Each event's bytes are data's (nothing changes them afterwards).
func storedEvents(stream, subject string, seq uint64, data []byte) []Stored {
	if !wire.IsPackSubject(subject) {
		return []Stored{newStored(stream, subject, seq, data)}
	}
	evs, err := wire.Unpack(data)
	if err != nil {
		return []Stored{{Stream: stream, Subject: subject, Seq: seq, Invalid: err.Error()}}
	}
	out := make([]Stored, len(evs))
	for i, e := range evs {
		if wire.PackCarries(subject, e.Subject) {
			out[i] = newStored(stream, e.Subject, seq, e.Data)
		} else {
			out[i] = Stored{Stream: stream, Subject: subject, Seq: seq,
				Invalid: fmt.Sprintf("event %d of the pack is on %.128q, which a pack on %s may not carry", i, e.Subject, subject)}
		}
		out[i].Part, out[i].Parts = i, len(evs)
	}
	return out
}
