package projector

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
	"github.com/capdir/capdir/internal/jsonmember/jsonmembertest"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// headSeeds are receipt and request data: as capdir writes them, and in the
// forms the hand reader must leave to the general decoder.
func headSeeds(t testing.TB) []string {
	at := time.Date(2026, 12, 6, 4, 5, 6, 789, time.UTC)
	rc := wire.Receipt{
		ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_01JX", Actor: wire.OwnerActor, Key: "WEATHER", Type: "http", Runner: "http",
			OK: true, Ran: true, Status: wire.StatusProvenMaterialResult, StartedAt: at, FinishedAt: at.Add(time.Millisecond)},
		Body: `{"q":"a \"quoted\" } ] { ["}`, Result: `HTTP 200:{"t":18.5}`, BreakerKind: "upstream_other", CredTag: "tag_0123", BreakerGeneration: 7,
	}
	req := wire.InvocationRequest{InvocationID: "inv_01JX", Key: "WEATHER", Body: "a|b", Credential: wire.OwnerActor}
	var seeds []string
	for _, v := range []any{rc, req} {
		ev, err := wire.NewEvent(at, wire.TypeReceipt, wire.OwnerActor, v)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, string(ev.Data))
	}
	return append(seeds,
		`{}`, ` { } `, `[]`, `"x"`, `null`, `{"key":"K"}`,
		`{"key":"K","key":"L"}`, `{"Key":"K"}`, `{"KEY":"K","key":"L"}`, `{"k\u0065y":"K"}`, "{\"\u212aey\":\"K\"}",
		`{"key":null}`, `{"key":7}`, `{"key":"a\nb"}`, `{"key":"\u00e9"}`, `{"key":"é"}`,
		`{"breaker_generation":1e3}`, `{"breaker_generation":-1}`, `{"breaker_generation":1.0}`, `{"breaker_generation":18446744073709551615}`,
		`{"breaker_generation":18446744073709551616}`, `{"breaker_generation":007}`, `{"breaker_generation":"7"}`,
		`{"finished_at":"2026-12-06T04:05:06Z"}`, `{"finished_at":"yesterday"}`, `{"finished_at":null}`, `{"finished_at":1}`,
		`{"finished_at":"2026-12-06T04:05:06\u002b01:00"}`, `{"finished_at":"2026-12-06T04:05:06+01:00"}`,
		`{"x":{"a":[1,{"b":"}"}],"c":"\\\""},"invocation_id":"inv_1","y":[[]],"z":true,"w":-0.5e-3}`,
		"{\"key\"\t:\r\n\"K\" , \"actor\" : \"a\"}",
		`{"breaker_kind":"not_counted","actor":"owner:terminal-key","cred_tag":""}`,
	)
}

// Whatever the hand reader of a receipt's or a request's head reads, the general
// decoder (wire.Event.DataAs) reads the same from the same data; what it leaves,
// the fold hands to the general decoder.
func FuzzHeadsDecodedAsDataAsDecodesThem(f *testing.F) {
	for _, s := range headSeeds(f) {
		f.Add([]byte(s), "WEATHER")
	}
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		if !json.Valid(data) {
			return // the fold sees only data wire has checked
		}
		ev := wire.Event{Type: wire.TypeReceipt, Data: data}
		var got receiptHead
		if decodeReceiptHead(data, key, &got) {
			var want receiptHead
			if err := ev.DataAs(&want); err != nil {
				t.Fatalf("%s: read by hand as %+v, the decoder refuses it: %v", data, got, err)
			}
			if !sameReceiptHead(got, want) {
				t.Fatalf("%s: read by hand as %+v, the decoder reads %+v", data, got, want)
			}
		}
		var gotReq requestHead
		if decodeRequestHead(data, key, &gotReq) {
			var want requestHead
			if err := ev.DataAs(&want); err != nil {
				t.Fatalf("%s: request read by hand as %+v, the decoder refuses it: %v", data, gotReq, err)
			}
			if gotReq != want {
				t.Fatalf("%s: request read by hand as %+v, the decoder reads %+v", data, gotReq, want)
			}
		}
	})
}

func sameReceiptHead(a, b receiptHead) bool {
	ta, tb := a.FinishedAt, b.FinishedAt
	a.FinishedAt, b.FinishedAt = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb) && ta.String() == tb.String()
}

// The seeds the general decoder must decide are left to it, and capdir's own
// receipts and requests are read by hand, allocating for the invocation id and
// the credential's tag alone (the key, the owner's actor and the breaker kind
// are the strings the fold already holds).
func TestHeadsOfCapdirsOwnEventsAreReadByHand(t *testing.T) {
	seeds := headSeeds(t)
	var rc receiptHead
	if !decodeReceiptHead([]byte(seeds[0]), "WEATHER", &rc) {
		t.Fatalf("capdir's receipt %s is left to the general decoder", seeds[0])
	}
	if rc.InvocationID != "inv_01JX" || rc.Key != "WEATHER" || rc.Actor != wire.OwnerActor || rc.CredTag != "tag_0123" ||
		rc.BreakerGeneration != 7 || rc.BreakerKind != "upstream_other" || !rc.FinishedAt.Equal(time.Date(2026, 12, 6, 4, 5, 6, 789+1e6, time.UTC)) {
		t.Fatalf("capdir's receipt read as %+v", rc)
	}
	rcData, reqData := []byte(seeds[0]), []byte(seeds[1])
	if n := allocstest.PerRun(t, 100, func() { decodeReceiptHead(rcData, "WEATHER", &rc) }); n > 2 {
		t.Errorf("reading a receipt's head allocates %v times, want at most 2", n)
	}
	var req requestHead
	if !decodeRequestHead([]byte(seeds[1]), "WEATHER", &req) || req != (requestHead{InvocationID: "inv_01JX", Key: "WEATHER"}) {
		t.Fatalf("capdir's request %s read as %+v", seeds[1], req)
	}
	if n := allocstest.PerRun(t, 100, func() { decodeRequestHead(reqData, "WEATHER", &req) }); n > 1 {
		t.Errorf("reading a request's head allocates %v times, want at most 1", n)
	}
	// The checks around them add nothing: the head they return stays on their
	// caller's stack (only the general decoder's target goes to the heap).
	rcEvent := &eventlog.Stored{Event: wire.Event{Type: wire.TypeReceipt, Data: rcData}}
	rcSubj := wire.Subject{Family: wire.ReceiptFamily, Key: "WEATHER"}
	if n := allocstest.PerRun(t, 100, func() { checkReceipt(rcEvent, rcSubj) }); n > 2 {
		t.Errorf("checking a receipt allocates %v times, want at most 2", n)
	}
	reqEvent := &eventlog.Stored{Event: wire.Event{Type: wire.TypeInvocationRequested, Data: reqData}}
	reqSubj := wire.Subject{Family: wire.RequestFamily, Key: "WEATHER"}
	if n := allocstest.PerRun(t, 100, func() { checkRequest(reqEvent, reqSubj) }); n > 1 {
		t.Errorf("checking a request allocates %v times, want at most 1", n)
	}
	for _, s := range []string{`[]`, `"x"`, `null`, `{"key":"K","key":"L"}`, `{"Key":"K"}`, `{"k\u0065y":"K"}`, "{\"\u212aey\":\"K\"}",
		`{"key":null}`, `{"key":7}`, `{"key":"a\nb"}`, `{"key":"é"}`, `{"breaker_generation":1e3}`, `{"finished_at":null}`} {
		var r receiptHead
		if decodeReceiptHead([]byte(s), "K", &r) {
			t.Errorf("%s was read by hand as %+v; it is the general decoder's to read", s, r)
		}
	}
	// A fold of a receipt the hand reader leaves reads it as before.
	var r receiptHead
	if decodeReceiptHead([]byte(`{"Key":"K","invocation_id":"inv_1"}`), "K", &r) {
		t.Fatal("a name in another case was read by hand")
	}
	st := &eventlog.Stored{Event: wire.Event{Type: wire.TypeReceipt, Data: []byte(`{"Key":"K","invocation_id":"inv_1"}`)}}
	if got, err := checkReceipt(st, wire.Subject{Family: wire.ReceiptFamily, Key: "K"}); err != nil || got.Key != "K" || got.InvocationID != "inv_1" {
		t.Errorf("a receipt naming its key in another case: %+v, %v; the general decoder takes it", got, err)
	}
}

// Random objects of the heads' names (and other spellings of them, and other
// names) with values of every kind, spaced every way JSON allows: the hand
// reader reads each as the general decoder does, or leaves it to it; and it
// reads by hand the ones of capdir's form.
func TestHeadsReadByHandAsDataAsReadsThemOverRandomObjects(t *testing.T) {
	names := append(append([]string{}, receiptHeadNames...), "Key", "INVOCATION_ID", "Finished_At", "body", "result", "k\\u0065y", "x", "")
	values := []string{
		`"WEATHER"`, `"inv_01"`, `"owner:terminal-key"`, `"not_counted"`, `"a\"b"`, `"a\\"`, `"\u00e9"`, `"é"`, `""`,
		`"2026-12-06T04:05:06Z"`, `"2026-12-06T04:05:06.123456789+01:00"`, `"2026-13-06T04:05:06Z"`,
		`0`, `7`, `18446744073709551615`, `18446744073709551616`, `-1`, `1.5`, `1e2`, `true`, `false`, `null`,
		`{}`, `[]`, `{"a":"}\"{","b":[1,{"c":"]"}]}`, `[["\\"],{}]`,
	}
	var byHand int
	jsonmembertest.Objects(t, 20000, names, values, func(b []byte) {
		ev := wire.Event{Type: wire.TypeReceipt, Data: b}
		var got, want receiptHead
		if decodeReceiptHead(b, "WEATHER", &got) {
			byHand++
			if err := ev.DataAs(&want); err != nil || !sameReceiptHead(got, want) {
				t.Fatalf("%s: read by hand as %+v, the decoder reads %+v (%v)", b, got, want, err)
			}
		}
		var gotReq, wantReq requestHead
		if decodeRequestHead(b, "WEATHER", &gotReq) {
			if err := ev.DataAs(&wantReq); err != nil || gotReq != wantReq {
				t.Fatalf("%s: request read by hand as %+v, the decoder reads %+v (%v)", b, gotReq, wantReq, err)
			}
		}
	})
	if byHand < 2000 {
		t.Errorf("only %d of 20000 objects were read by hand", byHand)
	}
}
