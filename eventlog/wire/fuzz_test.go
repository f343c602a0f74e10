package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// Decode never panics; an event it accepts has an id and a type, re-encodes with
// Encode to what json.Marshal gives, bytes that decode to the same event, and its data decodes (or is
// refused with ErrBadEvent) as every payload type without a panic.
func FuzzDecodeEvent(f *testing.F) {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, data := range []any{
		InvocationRequest{Key: "K", Body: "a|b", Credential: OwnerActor},
		Receipt{ReceiptSummary: ReceiptSummary{InvocationID: "inv_1", Key: "K", Status: StatusProvenMaterialResult}, Result: "<x>"},
		TokenRevoked{JTI: "abc", Exp: 1},
		map[string]any{"k": []any{1, "é", nil}},
	} {
		ev, _ := NewEvent(at, TypeReceipt, "engine:n", data)
		b, _ := Encode(&ev)
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"id":"x","type":"T"}`, `{"id":"x","type":"T","data":}`, `{"id":"\u00e9","type":"T","at":"2026-01-01T00:00:00Z","actor":"a","data":{"x":1}}`,
		`{"id":"x","type":"T","at":1,"data":null}`, `[1]`, "\xff", `{"id":"x","type":"T","data":{"a":"\ud800"}}`,
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00Z","actor":"a","data":{"a":"<b>","c":"\u2028 \u0026"}}`,
		"{\"id\":\"x\",\"type\":\"T\",\"at\":\"2026-01-01T00:00:00Z\",\"actor\":\"a\",\"data\":{\"a\":\"\u2029\"}}",
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00Z","actor":"a","data":{"a":"x y","b":[1, 2]}}`,
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00Z","actor":"a","data":{"a":"\"","b":[1, 2]}}`,
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00.500Z","actor":"a","data":{"a":"\" \\","b":[1,{"c":null}]}}`,
		// Decoded shared and given back as they came only when Encode writes them so.
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00.5Z","actor":"a","data":{"a":[1,"b"]}}`,
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00+00:00","actor":"a","data":{"a":1}}`,
		`{"id":"x","type":"T","at":"2026-01-01T00:00:00Z","actor":"a<b","data":{"a":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, shared := range []bool{false, true} {
			decode := Decode
			if shared {
				decode = DecodeShared
			}
			ev, err := decode(append([]byte(nil), b...))
			if err != nil {
				continue
			}
			if ev.ID == "" || ev.Type == "" {
				t.Fatalf("accepted an event without id or type: %q", b)
			}
			out, err := Encode(&ev)
			want, werr := json.Marshal(&ev)
			if (err == nil) != (werr == nil) || err == nil && !bytes.Equal(out, want) {
				t.Fatalf("%q: Encode gives %q, %v; json.Marshal %q, %v", b, out, err, want, werr)
			}
			if err != nil {
				continue // data that is not JSON (only through the slow path) does not encode
			}
			again, err := Decode(out)
			if err != nil || again.ID != ev.ID || again.Type != ev.Type || again.Actor != ev.Actor || !again.At.Equal(ev.At) {
				t.Fatalf("%q re-encoded to %q, which decodes to %+v, %v", b, out, again, err)
			}
			var d1, d2 any
			if json.Unmarshal(ev.Data, &d1) == nil && json.Unmarshal(again.Data, &d2) == nil {
				x, _ := json.Marshal(d1)
				y, _ := json.Marshal(d2)
				if !bytes.Equal(x, y) {
					t.Fatalf("data changed: %s != %s", x, y)
				}
			}
			var req InvocationRequest
			var rc Receipt
			var tr TokenRevoked
			ev.DataAs(&req)
			ev.DataAs(&rc)
			ev.DataAs(&tr)
		}
	})
}
