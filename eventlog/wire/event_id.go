package wire

import "time"

// NewEventWithID is NewEvent for an event whose id its appender derives (a
// receipt's, a step's request's): no ULID is minted only to be replaced.
func NewEventWithID(id string, t time.Time, typ, actor string, data any) (Event, error) {
	return newEvent(id, t.UTC(), typ, actor, data)
}
