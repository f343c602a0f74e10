package wire

import (
	"encoding/json"
	"testing"
	"time"
)

// An event built under a derived id is the one NewEvent builds but for its id, and
// it is written as encoding/json writes it.
func TestNewEventWithIDIsNewEventUnderItsID(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	req := &InvocationRequest{InvocationID: "inv_1", Trace: "t_1", Key: "K", Body: "a|b", Credential: OwnerActor}
	got, err := NewEventWithID("rcpt_derived", at, TypeInvocationRequested, OwnerActor, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewEvent(at, TypeInvocationRequested, OwnerActor, *req)
	if err != nil {
		t.Fatal(err)
	}
	want.ID = "rcpt_derived"
	if got.ID != want.ID || got.Type != want.Type || !got.At.Equal(want.At) || got.At.Location() != time.UTC || got.Actor != want.Actor || string(got.Data) != string(want.Data) {
		t.Fatalf("NewEventWithID = %+v, want %+v", got, want)
	}
	b, err := Encode(&got)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := json.Marshal(&got); string(b) != string(m) {
		t.Fatalf("Encode = %s, json.Marshal = %s", b, m)
	}
	if _, err := NewEventWithID("x", at, TypeReceipt, "a", func() {}); err == nil {
		t.Fatal("data that does not encode: no error")
	}
}
