package wire

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/capdir/capdir/internal/allocstest"
)

// Event ids are ULIDs stamped with their time, strictly increasing within a
// millisecond (a time standing still included), fresh across milliseconds, and
// minted without an allocation.
func TestNewULIDIsMonotonicWithinAMillisecond(t *testing.T) {
	at := time.Date(2026, 12, 6, 4, 5, 6, 0, time.UTC)
	prev := newULID(at)
	for i := range 100000 {
		id := newULID(at)
		if id.Compare(prev) <= 0 {
			t.Fatalf("id %d: %s after %s: not increasing within a millisecond", i, id, prev)
		}
		if id.Time() != ulid.Timestamp(at) {
			t.Fatalf("id %s stamped %d, want %d", id, id.Time(), ulid.Timestamp(at))
		}
		parsed, err := ulid.ParseStrict(id.String())
		if err != nil || parsed != id {
			t.Fatalf("%s does not parse back: %v", id, err)
		}
		prev = id
	}
	later := newULID(at.Add(time.Millisecond))
	if later.Time() != ulid.Timestamp(at)+1 || later.Compare(prev) <= 0 {
		t.Fatalf("the next millisecond's id %s, after %s", later, prev)
	}
	// A new millisecond starts from fresh entropy: two of them differ there.
	a, b := newULID(at.Add(2*time.Millisecond)), newULID(at.Add(3*time.Millisecond))
	if [10]byte(a[6:]) == [10]byte(b[6:]) {
		t.Fatalf("two milliseconds share their entropy: %s, %s", a, b)
	}
	if n := allocstest.PerRun(t, 1000, func() { newULID(at) }); n != 0 {
		t.Errorf("newULID allocates %v times", n)
	}
}
