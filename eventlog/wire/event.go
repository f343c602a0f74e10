package wire

import (
	"encoding/json"
	"fmt"
	"time"

	gojson "github.com/goccy/go-json"
)

// Event types.
const (
	TypeDirectoryMutate     = "DIRECTORY_MUTATE"
	TypeInvocationRequested = "INVOCATION_REQUESTED"
	TypeReceipt             = "RECEIPT"
	TypeTokenRevoked        = "TOKEN_REVOKED"
	TypeBreakerReset        = "BREAKER_RESET"
)

// Event is the envelope every message on the log carries.
type Event struct {
	ID    string          `json:"id"`    // ULID; also the Nats-Msg-Id
	Type  string          `json:"type"`  // one of the Type constants
	At    time.Time       `json:"at"`    // RFC 3339, UTC
	Actor string          `json:"actor"` // who caused it, e.g. owner:terminal-key
	Data  json.RawMessage `json:"data"`

	// made is Data as newEvent made it, json.Marshal's bytes: while Data is
	// still that slice, Encode writes it as it is (compactData).
	made []byte
	// enc is the whole envelope when it was written with its data, in one
	// buffer of which made is a slice (newEvent), or the envelope it was
	// decoded from when shared (DecodeShared); Encode gives it back while the
	// event still holds what it was written from and it is what Encode writes.
	enc []byte
}

// compactData reports whether Data is still the slice newEvent made, as
// json.Marshal wrote it: valid and compact, to be written as it is.
func (ev *Event) compactData() bool {
	return len(ev.Data) > 0 && len(ev.Data) == len(ev.made) && &ev.Data[0] == &ev.made[0]
}

// NewEvent builds an envelope with a fresh ULID stamped at t.
func NewEvent(t time.Time, typ, actor string, data any) (Event, error) {
	t = t.UTC()
	return newEvent(newULID(t).String(), t, typ, actor, data)
}

// Decode parses a stored message body into an Event.
func Decode(b []byte) (Event, error) { return decode(b, false) }

// DecodeShared is Decode for a body nothing will change afterwards, such as a
// message delivered by the NATS client: the event's data is a slice of b, not a copy.
func DecodeShared(b []byte) (Event, error) { return decode(b, true) }

func decode(b []byte, shared bool) (Event, error) {
	var ev Event
	if decodeEnvelope(b, &ev, shared) {
		if ev.ID == "" || ev.Type == "" {
			return Event{}, fmt.Errorf("%w: missing id or type", ErrBadEvent)
		}
		return ev, nil
	}
	return decodeJSON(b)
}

// decodeJSON is decode through encoding/json: apart, so that only this path's
// event escapes to the heap.
func decodeJSON(b []byte) (Event, error) {
	ev := new(Event)
	if err := json.Unmarshal(b, ev); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if ev.ID == "" || ev.Type == "" {
		return Event{}, fmt.Errorf("%w: missing id or type", ErrBadEvent)
	}
	return *ev, nil
}

// DataAs decodes the event's data into v. Data is decoded with goccy/go-json, a
// faster decoder with encoding/json's semantics (folding events is dominated by this
// call); data arriving from the bus is untrusted, so a decoder panic is turned into
// an ErrBadEvent rather than taking the process down.
func (e *Event) DataAs(v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s data: decoder panic: %v", ErrBadEvent, e.Type, r)
		}
	}()
	if err := gojson.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("%w: %s data: %v", ErrBadEvent, e.Type, err)
	}
	return nil
}
