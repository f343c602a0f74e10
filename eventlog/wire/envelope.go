package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	gojson "github.com/goccy/go-json"
)

// The envelope is written and read on every append and every delivery, so its
// common form has a direct encoder and decoder: the one encoding/json itself
// produces for an event whose id, type and actor are plain ASCII and whose data
// came from json.Marshal. Anything else goes through encoding/json, so the bytes
// written and the values read are exactly encoding/json's.

// Encode returns the JSON of ev, byte for byte what json.Marshal(ev) gives. The
// bytes of an event written with its envelope (an invocation's request or
// receipt) are that envelope, shared with the event: read them, do not change
// them (an append to them makes a copy).
func Encode(ev *Event) ([]byte, error) {
	if !plain(ev.ID) || !plain(ev.Type) || !plain(ev.Actor) || !ev.compactData() && !marshalsAsIs(ev.Data) {
		return marshalEvent(*ev)
	}
	if ev.enc != nil && ev.holdsItsEnvelope() {
		return ev.enc[:len(ev.enc):len(ev.enc)], nil // written by newEvent, or decoded shared from what this writes
	}
	b := appendEnvelopeHead(make([]byte, 0, envelopeHead+len(ev.ID)+len(ev.Type)+len(ev.Actor)+len(ev.Data)), ev.ID, ev.At, ev.Type, ev.Actor)
	if b == nil {
		return marshalEvent(*ev) // the error time.Time.MarshalJSON gives, from encoding/json
	}
	b = append(b, ev.Data...)
	b = append(b, '}')
	return b, nil
}

// strictRFC3339 reports whether t, a time in time.RFC3339Nano, is one
// time.Time.MarshalJSON accepts: a year of four digits, a zone's hour under 24.
func strictRFC3339(t []byte) bool {
	if len(t) < len("2006-01-02T15:04:05Z") || t[4] != '-' {
		return false
	}
	if t[len(t)-1] == 'Z' {
		return true
	}
	z := t[len(t)-len("Z07:00"):]
	return (z[0] == '+' || z[0] == '-') && 10*(z[1]-'0')+(z[2]-'0') < 24
}

// envelopeHead is the room of an envelope around its data, time and strings.
const envelopeHead = len(`{"id":"","type":"","at":"","actor":"","data":}`) + len(time.RFC3339Nano)

// newEvent is the event of id, at (UTC), typ and actor carrying data as
// json.Marshal writes it. A receipt or a request (the data of every
// invocation, which have encoders of their own) is written straight into its
// envelope when the strings are plain: one buffer, which Encode then gives back
// as it is, instead of the data's and a copy of it in the envelope's.
func newEvent(id string, at time.Time, typ, actor string, data any) (Event, error) {
	if plain(id) && plain(typ) && plain(actor) {
		if ev, ok := enveloped(id, at, typ, actor, data); ok {
			return ev, nil
		}
	}
	raw, err := marshalData(data)
	if err != nil {
		return Event{}, fmt.Errorf("wire: encode %s data: %w", typ, err)
	}
	return Event{ID: id, Type: typ, At: at, Actor: actor, Data: raw, made: raw}, nil
}

// newRequestEvent is newEvent of req, which it does not keep: a caller's
// request stays on its stack (newEvent's data goes to the heap, for the
// general encoder it falls back to).
func newRequestEvent(id string, at time.Time, actor string, req *InvocationRequest) (Event, error) {
	if plain(id) && plain(actor) {
		if ev, ok := enveloped(id, at, TypeInvocationRequested, actor, req); ok {
			return ev, nil
		}
	}
	own := *req
	return newEvent(id, at, TypeInvocationRequested, actor, &own)
}

// enveloped is newEvent's one buffer, or false for data without its own
// encoder or that it leaves to encoding/json.
func enveloped(id string, at time.Time, typ, actor string, data any) (Event, bool) {
	var rc *Receipt
	var req *InvocationRequest
	size := envelopeHead + len(id) + len(typ) + len(actor)
	switch v := data.(type) {
	case *Receipt:
		if rc = v; v == nil {
			return Event{}, false
		}
		size += receiptSize(v)
	case *InvocationRequest:
		if req = v; v == nil {
			return Event{}, false
		}
		size += requestSize(v)
	default:
		return Event{}, false
	}
	b := appendEnvelopeHead(make([]byte, 0, size), id, at, typ, actor)
	if b == nil {
		return Event{}, false
	}
	start := len(b)
	var ok bool
	if rc != nil {
		b, ok = appendReceipt(b, rc)
	} else {
		b, ok = appendRequest(b, req)
	}
	if !ok {
		return Event{}, false
	}
	end := len(b)
	b = append(b, '}')
	raw := b[start:end:end]
	return Event{ID: id, Type: typ, At: at, Actor: actor, Data: raw, made: raw, enc: b}, true
}

// appendEnvelopeHead appends an envelope's fields up to its data, as
// json.Marshal writes them for plain strings; nil when at is not a time
// json.Marshal writes.
func appendEnvelopeHead(b []byte, id string, at time.Time, typ, actor string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, id...)
	b = append(b, `","type":"`...)
	b = append(b, typ...)
	b = append(b, `","at":"`...)
	t := len(b)
	b = at.AppendFormat(b, time.RFC3339Nano)
	if !strictRFC3339(b[t:]) {
		return nil
	}
	b = append(b, `","actor":"`...)
	b = append(b, actor...)
	return append(b, `","data":`...)
}

// holdsItsEnvelope reports whether ev still holds what its envelope (enc) was
// written from, or decoded from: its data still the slice of enc before enc's
// closing brace, and a head written from its strings and time now the one enc
// starts with. Encode gives enc back only for strings json.Marshal writes as
// they are (plain) and data it writes unchanged (compactData, or marshalsAsIs).
func (ev *Event) holdsItsEnvelope() bool {
	n := len(ev.Data)
	if n == 0 || len(ev.enc) < n+1 || &ev.Data[0] != &ev.enc[len(ev.enc)-1-n] {
		return false
	}
	var buf [160]byte
	head := appendEnvelopeHead(buf[:0], ev.ID, ev.At, ev.Type, ev.Actor)
	return head != nil && string(head) == string(ev.enc[:len(ev.enc)-1-n])
}

// marshalsAsIs reports whether b is JSON that json.Marshal writes as it is when
// it is a json.RawMessage: valid, with no space between its tokens and none of
// the characters it escapes ('<', '>', '&', U+2028 and U+2029). An event's data
// decoded from an envelope in that form (a bus call's request, as wire.Call
// sends it) is then written as it came, not through encoding/json.
func marshalsAsIs(b []byte) bool {
	if len(b) == 0 || !validJSON(b) {
		return false
	}
	in := false // inside a string
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			return false
		case in:
			if c == '\\' {
				i++ // the escaped character: ASCII in valid JSON
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case isSpace(c):
			return false
		}
	}
	return true
}

// marshalEvent is Encode through encoding/json, on a copy of the event: only this
// path makes it escape.
func marshalEvent(ev Event) ([]byte, error) { return json.Marshal(&ev) }

// plain reports whether encoding/json writes s as is between quotes: printable
// ASCII without the characters it escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

func plainByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// decodeEnvelope fills ev from b when b is an envelope in the form Encode
// writes, and reports whether it did; the caller falls back to encoding/json
// otherwise. The data is checked to be valid JSON, as encoding/json would; it is a
// copy unless shared, when it is a slice of b.
func decodeEnvelope(b []byte, ev *Event, shared bool) bool {
	rest, ok := bytes.CutPrefix(b, []byte(`{"id":"`))
	if !ok {
		return false
	}
	// The id, the type and the actor are read as offsets into b and made strings
	// at once, out of one string: one allocation per event, not three.
	start := len(b) - len(rest)
	var id, typ, actor span
	if id, rest, ok = cutSpan(b, rest, `,"type":"`); !ok {
		return false
	}
	if typ, rest, ok = cutSpan(b, rest, `,"at":"`); !ok {
		return false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return false
	}
	// rest[-1] is the opening quote: hand the quoted string to Time, as encoding/json does.
	quoted := b[len(b)-len(rest)-1 : len(b)-len(rest)+end+1]
	rest = rest[end+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"actor":"`)); !ok {
		return false
	}
	if actor, rest, ok = cutSpan(b, rest, `,"data":`); !ok {
		return false
	}
	if len(rest) < 2 || rest[len(rest)-1] != '}' {
		return false
	}
	data := rest[:len(rest)-1]
	if isSpace(data[0]) || isSpace(data[len(data)-1]) || !validJSON(data) {
		return false
	}
	var e Event
	if err := e.At.UnmarshalJSON(quoted); err != nil {
		return false
	}
	strs := string(b[start:actor.end])
	e.ID, e.Type, e.Actor = id.in(strs, start), typ.in(strs, start), actor.in(strs, start)
	if shared {
		// b is kept as the envelope too: Encode gives it back when it is what
		// Encode would write (holdsItsEnvelope), as a bus call's request is.
		e.Data = json.RawMessage(data[:len(data):len(data)])
		e.enc = b[:len(b):len(b)]
	} else {
		e.Data = append(json.RawMessage(nil), data...)
	}
	*ev = e
	return true
}

// validJSON reports whether b is one valid JSON value, as json.Valid does, with
// goccy/go-json's validator: about seven times faster on a receipt, and every event
// read pays it. FuzzValidAgreesWithEncodingJSON holds the two to the same answers.
func validJSON(b []byte) bool { return gojson.Valid(b) }

// span is where a string lies in an envelope: b[start:end].
type span struct{ start, end int }

// in is the span's string out of strs, the envelope's bytes from offset on.
func (s span) in(strs string, offset int) string { return strs[s.start-offset : s.end-offset] }

// cutSpan reads a plain string of b, whose tail rest is, up to its closing quote,
// which must be followed by next.
func cutSpan(b, rest []byte, next string) (span, []byte, bool) {
	at := len(b) - len(rest)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '"' {
			tail, ok := bytes.CutPrefix(rest[i+1:], []byte(next))
			return span{at, at + i}, tail, ok
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return span{}, nil, false
		}
	}
	return span{}, nil, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
