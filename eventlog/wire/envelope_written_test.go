package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// An invocation's request and receipt are written into their envelope
// directly, and Encode gives that envelope back without a copy: byte for byte
// what json.Marshal writes, for any fields they hold.
func TestEventWrittenWithItsEnvelope(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 12, 6, 2, 0, 0, 123456789, time.UTC)
	for range 5000 {
		var rc Receipt
		fill(r, reflect.ValueOf(&rc).Elem())
		var req InvocationRequest
		fill(r, reflect.ValueOf(&req).Elem())
		for _, data := range []any{&rc, &req} {
			ev, err := NewEventWithID("01J0000000000000000000000Z", at, TypeReceipt, "engine:node-1", data)
			if err != nil {
				if _, werr := json.Marshal(data); werr == nil {
					t.Fatalf("NewEventWithID: %v; encoding/json writes it", err)
				}
				continue
			}
			same(t, &ev)
		}
	}
}

// same checks that Encode gives what json.Marshal gives for ev.
func same(t *testing.T, ev *Event) {
	t.Helper()
	want, werr := json.Marshal(ev)
	got, gerr := Encode(ev)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Encode\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
	}
}

// An event changed after it was made is encoded as it now is: its envelope is
// given back only while the event holds what it was written from.
func TestEventChangedAfterItWasWrittenIsWrittenAgain(t *testing.T) {
	at := time.Date(2026, 12, 6, 2, 0, 0, 5, time.UTC)
	rc := &Receipt{ReceiptSummary: ReceiptSummary{InvocationID: "inv_1", Key: "ECHO", Status: StatusProvenMaterialResult, StartedAt: at, FinishedAt: at}, Result: "hi"}
	fresh := func() Event {
		ev, err := NewEventWithID("r1", at, TypeReceipt, "engine:a", rc)
		if err != nil || ev.enc == nil {
			t.Fatalf("a receipt's event is not written with its envelope (%v)", err)
		}
		return ev
	}
	ev := fresh()
	got, _ := Encode(&ev)
	if &got[0] != &ev.enc[0] {
		t.Fatal("Encode copied an envelope it could give back")
	}
	if more := append(got, "x"...); &more[0] == &ev.enc[0] {
		t.Fatal("an append to Encode's bytes wrote into the event's envelope")
	}
	if n := allocstest.PerRun(t, 100, func() { Encode(&ev) }); n != 0 {
		t.Fatalf("Encode of an event written with its envelope allocates %v times; want 0", n)
	}
	for name, change := range map[string]func(*Event){
		"id":                  func(ev *Event) { ev.ID = "r2" },
		"id not plain":        func(ev *Event) { ev.ID = "r<2>" },
		"type":                func(ev *Event) { ev.Type = TypeInvocationRequested },
		"actor":               func(ev *Event) { ev.Actor = "engine:b" },
		"actor of one more":   func(ev *Event) { ev.Actor = "engine:aa" },
		"time":                func(ev *Event) { ev.At = ev.At.Add(time.Second) },
		"time's zone":         func(ev *Event) { ev.At = ev.At.In(time.FixedZone("x", 3600)) },
		"time json refuses":   func(ev *Event) { ev.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"data replaced":       func(ev *Event) { ev.Data = json.RawMessage(`{"other":true}`) },
		"data cut":            func(ev *Event) { ev.Data = ev.Data[:len(ev.Data)-1] },
		"data cut at front":   func(ev *Event) { ev.Data = ev.Data[1:] },
		"data changed inside": func(ev *Event) { copy(ev.Data[bytes.Index(ev.Data, []byte(`"hi"`)):], `"ho"`) },
		"data emptied":        func(ev *Event) { ev.Data = nil },
	} {
		t.Run(name, func(t *testing.T) {
			ev := fresh()
			change(&ev)
			same(t, &ev)
		})
	}
}
