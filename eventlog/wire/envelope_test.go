package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// The direct envelope encoder and decoder must agree with encoding/json on every
// input: the same bytes out, the same event (or a fallback) in.
func TestEnvelopeMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 7, 26, 4, 0, 0, 123456789, time.UTC)
	datas := []any{
		map[string]any{"k": "v", "html": "<a&b>", "uni": "é\u2028"},
		InvocationRequest{InvocationID: "inv_1", Key: "K", Body: "x\"y\\z\n"},
		&InvocationRequest{InvocationID: "inv_1", Key: "K", Body: "x\"y\\z\n"},
		&Receipt{ReceiptSummary: ReceiptSummary{InvocationID: "inv_2", Key: "K", Status: "s<&>"}, Result: "é\u2028"},
		"plain", nil, 12.5, []int{1, 2},
	}
	strs := []string{"", "owner:terminal-key", "a<b", "é", "tab\t", `q"`, "01J0000000000000000000000Z"}
	for _, d := range datas {
		for _, s := range strs {
			for _, tm := range []time.Time{at, time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)),
				time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 25*3600)),
				time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("west", -(23*3600+59*60+30)))} {
				ev, err := NewEvent(at, "T"+s, s, d)
				if err != nil {
					t.Fatal(err)
				}
				ev.At = tm
				if s != "" {
					ev.ID = s
				}
				want, werr := json.Marshal(ev)
				got, gerr := Encode(&ev)
				if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
					t.Fatalf("encode %+v:\n got %s (%v)\nwant %s (%v)", ev, got, gerr, want, werr)
				}
				if werr == nil {
					checkDecode(t, want)
				}
			}
		}
	}
	for _, in := range []string{
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{}}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{},"id":"z"}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{}} `,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data": {}}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{} }`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{"x":}`,
		`{"id":"a","type":"b","at":"2026-07-26 04:00:00Z","actor":"c","data":1}`,
		`{"id":"a","type":"b","at":"bad","actor":"c","data":1}`,
		`{"id":"a\u0041","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":1}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":null}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00+02:00","actor":"c","data":"s"}`,
		`{"id":"","type":"","at":"2026-07-26T04:00:00Z","actor":"","data":[1]}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{}}}`,
		`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":1},"x":{"y":2}`,
		`{"id":"a","type":"b"}`, `{"id":"a`, ``, `null`,
	} {
		checkDecode(t, []byte(in))
	}
	var ev Event
	if !decodeEnvelope([]byte(`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{"x":[1]}}`), &ev, false) {
		t.Fatal("the canonical form must take the direct path")
	}
}

// The envelope of an event costs one allocation, its bytes: every append
// encodes one.
func TestEncodeAllocations(t *testing.T) {
	ev, err := NewEvent(time.Date(2026, 7, 26, 4, 0, 0, 123456789, time.UTC), TypeReceipt, "engine:a", map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if n := allocstest.PerRun(t, 100, func() { Encode(&ev) }); n > 1 {
		t.Fatalf("%v allocations per encoded envelope; want 1", n)
	}
}

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	var want Event
	werr := json.Unmarshal(in, &want)
	var got Event
	if !decodeEnvelope(in, &got, false) {
		return // falls back to encoding/json
	}
	if werr != nil {
		t.Fatalf("decode %s: fast path accepted what encoding/json refuses (%v)", in, werr)
	}
	if !reflect.DeepEqual(got, want) || !got.At.Equal(want.At) || got.At.Location().String() != want.At.Location().String() {
		t.Fatalf("decode %s:\n got %#v\nwant %#v", in, got, want)
	}
}

func TestDecodeSharedAliasesTheBody(t *testing.T) {
	body := []byte(`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{"x":1}}`)
	shared, err := DecodeShared(body)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(body, []byte(`"x":1`))
	body[i+4] = '2'
	if string(shared.Data) != `{"x":2}` || string(copied.Data) != `{"x":1}` {
		t.Fatalf("shared %s, copied %s", shared.Data, copied.Data)
	}
}

// An envelope decoded shared is encoded as the bytes it came in, without a
// copy, when they are what Encode writes (a bus call's request as wire.Call
// sends it); otherwise it is written again, as json.Marshal writes it.
func TestDecodedSharedEnvelopeEncodesAsItCame(t *testing.T) {
	for _, tc := range []struct {
		in   string
		same bool
	}{
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00.5Z","actor":"c","data":{"x":[1,"y"]}}`, true},
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00.50Z","actor":"c","data":{"x":1}}`, false},   // not how a time is written
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00+00:00","actor":"c","data":{"x":1}}`, false}, // nor its zone
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c<d","data":{"x":1}}`, false},    // '<' is escaped
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{"x": 1}}`, false},     // a space in the data
		{`{"id":"a","type":"b","at":"2026-07-26T04:00:00Z","actor":"c","data":{"x":"&"}}`, false},    // '&' is escaped
	} {
		body := []byte(tc.in)
		ev, err := DecodeShared(body)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Encode(&ev)
		want, _ := json.Marshal(&ev)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("%s: Encode %s, %v; json.Marshal %s", tc.in, out, err, want)
		}
		if same := &out[0] == &body[0]; same != tc.same {
			t.Fatalf("%s: encoded as the bytes it came in: %v, want %v", tc.in, same, tc.same)
		}
		if tc.same {
			if n := allocstest.PerRun(t, 100, func() { Encode(&ev) }); n != 0 {
				t.Fatalf("%v allocations to encode an envelope as it came; want 0", n)
			}
			ev.Actor = "z" // changed: written again
			if out, _ := Encode(&ev); &out[0] == &body[0] || !bytes.Contains(out, []byte(`"actor":"z"`)) {
				t.Fatalf("an event changed after its decode encoded as %s", out)
			}
			ev.Actor, ev.Data = "c", json.RawMessage(`{"x":[1,"y"]}`) // the same data, not the same bytes
			if out, _ := Encode(&ev); &out[0] == &body[0] || string(out) != tc.in {
				t.Fatalf("an event whose data was set again encoded as %s", out)
			}
		}
	}
}
