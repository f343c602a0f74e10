package eventlog

import (
	"fmt"
	"sync"

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
// of a pack's. Each event's bytes are data's (nothing changes them afterwards),
// or a buffer of their own for a compressed pack's.
func storedEvents(stream, subject string, seq uint64, data []byte) []Stored {
	var r packReader
	return r.events(stream, subject, seq, data)
}

// packReader reads the messages of one reader (a follower's) into events,
// using what it made for one pack again for the next: what events returns is
// good until the next call.
type packReader struct {
	evs []wire.PackedEvent
	out []Stored
	// transient: a compressed pack is decompressed into a buffer of packBufs,
	// which the pack's last event carries (Stored.buf) for its follower to put
	// back once the batch holding it is handled (FollowOptions.Transient).
	transient bool
}

// packBufs are the buffers transient readers decompress packs into.
var packBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPack bounds a buffer kept in packBufs: a larger pack (rare: a pack
// of a few hundred receipts decompresses to about a quarter of this) is
// decompressed into one of its own.
const maxPooledPack = 1 << 20

func (r *packReader) events(stream, subject string, seq uint64, data []byte) []Stored {
	out := r.out[:0]
	defer func() { r.out = out[:0] }()
	if !wire.IsPackSubject(subject) {
		out = append(out, newStored(stream, subject, seq, data))
		return out
	}
	var buf *[]byte
	if r.transient {
		buf = packBufs.Get().(*[]byte)
	}
	evs, used, err := wire.UnpackInto(r.evs, bufOf(buf), data)
	if err != nil {
		if buf != nil {
			packBufs.Put(buf)
		}
		out = append(out, Stored{Stream: stream, Subject: subject, Seq: seq, Invalid: err.Error()})
		return out
	}
	r.evs = evs
	for i, e := range evs {
		var st Stored
		if wire.PackCarries(subject, e.Subject) {
			st = newStored(stream, e.Subject, seq, e.Data)
		} else {
			st = Stored{Stream: stream, Subject: subject, Seq: seq,
				Invalid: fmt.Sprintf("event %d of the pack is on %.128q, which a pack on %s may not carry", i, e.Subject, subject)}
		}
		st.Part, st.Parts = i, len(evs)
		out = append(out, st)
	}
	clear(evs) // the reader keeps no event's bytes
	switch {
	case buf == nil:
	case used == nil || cap(used) > maxPooledPack:
		packBufs.Put(buf) // not used, or the pack took one of its own
	default:
		*buf = used[:0]
		out[len(out)-1].buf = buf
	}
	return out
}

// bufOf is *b, or nil when b is.
func bufOf(b *[]byte) []byte {
	if b == nil {
		return nil
	}
	return *b
}

// Release hands back the buffers batch's events were decompressed into, for a
// handler of a follower with FollowOptions.HandsBack: no event of batch, nor of
// a batch handed over before it, is read again. It does nothing for events read
// otherwise.
func Release(batch []Stored) { release(batch) }

// release puts back into packBufs the buffers batch's events were decompressed
// into (FollowOptions.Transient): their bytes are not to be read again.
func release(batch []Stored) {
	for i := range batch {
		if b := batch[i].buf; b != nil {
			batch[i].buf = nil
			packBufs.Put(b)
		}
	}
}
