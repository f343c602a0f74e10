package wire

import (
	"fmt"
	"time"
)

// NewEventWithID is NewEvent for an event whose id its appender derives (a
// receipt's, a step's request's): no ULID is minted only to be replaced.
func NewEventWithID(id string, t time.Time, typ, actor string, data any) (Event, error) {
	raw, err := marshalData(data)
	if err != nil {
		return Event{}, fmt.Errorf("wire: encode %s data: %w", typ, err)
	}
	return Event{ID: id, Type: typ, At: t.UTC(), Actor: actor, Data: raw, compact: true}, nil
}
