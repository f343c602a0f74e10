package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// An event in the form Encode writes is read with one allocation: its id, type
// and actor share one string, and shared data is a slice of the message.
func TestDecodeSharedAllocatesOnce(t *testing.T) {
	ev, err := NewEvent(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), TypeReceipt, "engine:node-1", map[string]string{"invocation_id": "inv_1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	var got Event
	n := allocstest.PerRun(t, 100, func() { got, err = DecodeShared(b) })
	if err != nil || got.ID != ev.ID || got.Type != ev.Type || got.Actor != ev.Actor || !got.At.Equal(ev.At) || string(got.Data) != string(ev.Data) {
		t.Fatalf("DecodeShared = %+v, %v; want %+v", got, err, ev)
	}
	if n > 1 {
		t.Errorf("DecodeShared allocates %v times per event; want 1", n)
	}
}

// A request's invocation id is its event id in lower case after the prefix, as
// strings.ToLower gives it, in one allocation.
func TestRequestInvocationIDLowersOnce(t *testing.T) {
	for _, id := range []string{"01J0ABCDEFGHJKMNPQRSTVWXYZ", "", "already_lower-09", "ÀÉÎ-Mixed", "\xff\xfeBad"} {
		if got, want := RequestInvocationID(id), InvocationPrefix+strings.ToLower(id); got != want {
			t.Errorf("RequestInvocationID(%q) = %q, want %q", id, got, want)
		}
	}
	id := "01J0ABCDEFGHJKMNPQRSTVWXYZ"
	if n := allocstest.PerRun(t, 100, func() { idSink = RequestInvocationID(id) }); n > 1 {
		t.Errorf("RequestInvocationID allocates %v times; want 1", n)
	}
}

var idSink string // what escapes, as an invocation id does
