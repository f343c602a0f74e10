package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
)

// Packs. Several of capdir's own events appended at about the same time (the
// facade's requests, the workers' receipts) may share one message of the data
// stream: the message is a pack, on the pack subject of their kind
// (PackSubject), and carries each event's subject and bytes as the log would
// have held it alone. The log's readers hand a pack's events over one by one
// (see eventlog's Stored.Part). Only capdir's own connections may publish on a
// pack subject, as on the subjects of the events it carries.
//
// A pack's data is PackFormat, then each event as the length of its subject (a
// uvarint), the subject, the length of its bytes (a uvarint) and the bytes; or,
// as capdir writes a pack that compresses (CompressPack), PackFormatS2, then
// what follows PackFormat compressed as one S2 block
// (github.com/klauspost/compress/s2).

// PackFormat is the first byte of a pack's data, its events as they are.
const PackFormat = 0x01

// PackFormatS2 is the first byte of a compressed pack's data.
const PackFormatS2 = 0x02

// MaxPackContent bounds what a compressed pack holds once decompressed (the
// embedded server's largest message); data claiming more is not a pack.
// CompressPack leaves a larger pack as it is.
const MaxPackContent = 8 << 20

// MaxPackRatio bounds how many times its compressed block's size a compressed
// pack may hold once decompressed; data claiming more is not a pack, refused
// before anything is allocated for it, so that a reader never holds more than
// this many times the bytes it was sent. A pack of events compresses to about
// a quarter; CompressPack leaves one that would compress further than this (a
// result of one byte repeated, say) as it is.
const MaxPackRatio = 32

// MaxPackEvents bounds the events of a pack; data claiming more is not a pack.
const MaxPackEvents = 1024

// maxPackSubject bounds an event's subject in a pack (a row key is at most 128
// bytes; capdir's subjects add a few tokens).
const maxPackSubject = 512

// ErrNotPack is Unpack's error for data that is not a pack.
var ErrNotPack = errors.New("wire: not a pack")

// AppendPacked appends one event, data on subject, to a pack's data b (begun
// with PackFormat).
func AppendPacked(b []byte, subject string, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(subject)))
	b = append(b, subject...)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// CompressPack is pack, a pack's data in PackFormat, compressed
// (PackFormatS2) when that makes it smaller, it holds no more than
// MaxPackContent and it compresses no further than MaxPackRatio, in a buffer of
// its own of its length; otherwise pack itself. Unpack reads both alike.
func CompressPack(pack []byte) []byte {
	if len(pack) < 2 || pack[0] != PackFormat || len(pack)-1 > MaxPackContent {
		return pack
	}
	// The block is encoded into a scratch buffer of s2's bound and copied out
	// at its size: a pack compresses to about a quarter of its bytes.
	sp := compressScratch.Get().(*[]byte)
	defer func() {
		if cap(*sp) <= maxKeptScratch {
			compressScratch.Put(sp)
		}
	}()
	if need := s2.MaxEncodedLen(len(pack) - 1); cap(*sp) < need {
		*sp = make([]byte, need)
	}
	block := s2.Encode((*sp)[:cap(*sp)], pack[1:])
	if 1+len(block) >= len(pack) || len(pack)-1 > MaxPackRatio*len(block) {
		return pack
	}
	out := make([]byte, 1+len(block))
	out[0] = PackFormatS2
	copy(out[1:], block)
	return out
}

// compressScratch holds CompressPack's scratch buffers; one over maxKeptScratch
// (a pack near the server's largest message) is not kept.
var compressScratch = sync.Pool{New: func() any { return new([]byte) }}

const maxKeptScratch = 1 << 20

// PackedSize is what AppendPacked adds for data on subject.
func PackedSize(subject string, data []byte) int {
	return uvarintLen(len(subject)) + len(subject) + uvarintLen(len(data)) + len(data)
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// PackedEvent is one event of a pack: its subject, and its bytes (a slice of
// the pack's data).
type PackedEvent struct {
	Subject string
	Data    []byte
}

// Unpack reads the events of data, a pack's data. It fails, matching
// ErrNotPack, for data that is not one: another format byte, a length past the
// end, no event, more than MaxPackEvents, an empty subject or one over 512
// bytes. It does not check the subjects' kinds: see PackCarries.
//
// A compressed pack (PackFormatS2) is decompressed into a buffer of its own,
// which the events' bytes are slices of; one claiming more than MaxPackContent
// or MaxPackRatio times its block's size, or whose block does not decode, is
// not a pack.
func Unpack(data []byte) ([]PackedEvent, error) {
	evs, _, err := UnpackInto(nil, nil, data)
	return evs, err
}

// UnpackInto is Unpack for a reader that reads many packs: the events are
// appended to evs[:0], and a compressed pack is decompressed into buf when it
// has room; when not, into a new buffer, of twice buf's room when that is more
// (as append grows a slice). used is the buffer the events' bytes are slices
// of when the pack was compressed (buf's, or the new one), nil when it was
// not: while the events are read, it must not be used for anything else.
func UnpackInto(evs []PackedEvent, buf, data []byte) (out []PackedEvent, used []byte, err error) {
	var rest []byte
	switch {
	case len(data) > 0 && data[0] == PackFormat:
		rest = data[1:]
	case len(data) > 0 && data[0] == PackFormatS2:
		n, err := s2.DecodedLen(data[1:])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: its compressed block: %v", ErrNotPack, err)
		}
		if n > MaxPackContent || n > MaxPackRatio*(len(data)-1) {
			return nil, nil, fmt.Errorf("%w: its block of %d bytes claims %d once decompressed, more than %d times its size or %d", ErrNotPack,
				len(data)-1, n, MaxPackRatio, MaxPackContent)
		}
		if cap(buf) < n {
			buf = make([]byte, n, max(n, 2*cap(buf)))
		}
		if rest, err = s2.Decode(buf[:n], data[1:]); err != nil {
			return nil, nil, fmt.Errorf("%w: its compressed block: %v", ErrNotPack, err)
		}
		used = buf[:n]
	default:
		return nil, nil, fmt.Errorf("%w: its data does not start with format %d or %d", ErrNotPack, PackFormat, PackFormatS2)
	}
	n := 0
	for r := rest; len(r) > 0; n++ { // count first, to allocate once
		if n == MaxPackEvents {
			return nil, nil, fmt.Errorf("%w: more than %d events", ErrNotPack, MaxPackEvents)
		}
		var err error
		if r, _, _, err = nextPacked(r); err != nil {
			return nil, nil, fmt.Errorf("%w: event %d: %w", ErrNotPack, n, err)
		}
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("%w: no event", ErrNotPack)
	}
	if cap(evs) < n {
		evs = make([]PackedEvent, 0, n)
	}
	evs = evs[:0]
	var last string
	for len(rest) > 0 {
		var subject, ev []byte
		rest, subject, ev, _ = nextPacked(rest)
		// A pack's events are mostly on one subject (one row's): each event
		// on the subject of the event before it shares its string.
		if len(evs) == 0 || string(subject) != last {
			last = string(subject)
		}
		evs = append(evs, PackedEvent{Subject: last, Data: ev})
	}
	return evs, used, nil
}

// nextPacked splits the first event off b.
func nextPacked(b []byte) (rest, subject, data []byte, err error) {
	sl, k := binary.Uvarint(b)
	if k <= 0 || sl == 0 || sl > maxPackSubject || uint64(len(b)-k) < sl {
		return nil, nil, nil, errors.New("bad subject length")
	}
	subject, b = b[k:k+int(sl)], b[k+int(sl):]
	dl, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < dl {
		return nil, nil, nil, errors.New("bad event length")
	}
	return b[k+int(dl):], subject, b[k : k+int(dl)], nil
}

// PackCarries reports whether a pack on packSubject may carry an event on
// subject.
func PackCarries(packSubject, subject string) bool {
	ps, ok := PackSubject(subject)
	return ok && ps == packSubject
}
