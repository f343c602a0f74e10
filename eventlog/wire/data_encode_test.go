package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// hostile are strings encoding/json escapes, or might be thought to: HTML, the
// line and paragraph separators, invalid UTF-8, every control character, DEL,
// quotes and backslashes, multi-byte runes, and plain text.
var hostile = []string{
	"", "plain", `<script>alert("x")</script>&amp;`, "a\u2028b\u2029c", "\xff\xfe\xfd", "ok\xc3", "\xe2\x80",
	"\x00\x01\x02\x03\x04\x05\x06\x07\b\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
	"\x7f del", `"quoted" \back\slash/`, "ünïcödé 日本語 🙂", "\ufeffbom", "\ufffd", "a\u2027b\u202ac",
	"ERR:http:401 {\"error\":\"<b>no</b>\"}",
}

func hostileString(r *rand.Rand) string {
	var sb strings.Builder
	for n := r.IntN(4); n >= 0; n-- {
		sb.WriteString(hostile[r.IntN(len(hostile))])
	}
	return sb.String()
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 12.345678, 1e-6, 9.99e-7, 1e20, 1e21, -1e21, 123456789.123, 3.4e38, math.SmallestNonzeroFloat64, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}

var times = []time.Time{
	{}, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC),
	time.Date(2026, 12, 1, 12, 0, 0, 120000000, time.FixedZone("", 5*3600+30*60)), time.Now(), // with a monotonic reading
	time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", -8*3600)), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 23*3600+59*60)),
	time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)),
	time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -25*3600)), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600+30)),
}

// pick is one of the first common values of vs, and now and then one of the others.
func pick[T any](r *rand.Rand, vs []T, common int) T {
	if r.IntN(10) == 0 {
		return vs[r.IntN(len(vs))]
	}
	return vs[r.IntN(common)]
}

// fill sets every exported field of v (a pointer to a struct) at random: each
// string hostile or empty, numbers zero or not, times and floats from the lists
// above, pointers and slices nil, empty or filled. A field added to the type is
// filled too, so the encoders below are compared on it.
func fill(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(pick(r, times, 5)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	case reflect.String:
		if r.IntN(4) != 0 {
			v.SetString(hostileString(r))
		}
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		if r.IntN(3) != 0 {
			v.SetInt(r.Int64N(1<<62) - 1<<61)
		}
	case reflect.Uint64:
		if r.IntN(3) != 0 {
			v.SetUint(r.Uint64())
		}
	case reflect.Float64:
		v.SetFloat(pick(r, floats, 13))
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			if r.IntN(4) == 0 {
				v.SetBytes([]byte(` {"a": "<b>", "c": [1, 2.50]} `))
			}
			return
		}
		switch r.IntN(3) {
		case 0:
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fill(r, v.Index(i))
			}
		}
	case reflect.Map:
		switch r.IntN(12) {
		case 0:
			v.Set(reflect.MakeMap(v.Type()))
		case 1:
			v.Set(reflect.ValueOf(map[string]any{"did_you_mean": []string{"A<B"}, "n": 1.5}))
		}
	default:
		panic("fill: no case for " + v.Type().String())
	}
}

// sameAsEncodingJSON checks that marshalData(v) is json.Marshal(v): the same
// bytes, or an error both ways.
func sameAsEncodingJSON(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := marshalData(v)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("marshalData(%#v)\n= %s, %v\nwant %s, %v", v, got, gerr, want, werr)
	}
}

// A receipt and an invocation request are written byte for byte as
// encoding/json writes them, whatever their fields hold: hostile strings,
// omitted and zero fields, floats and times at encoding/json's edges (those it
// refuses refused the same way), extra data and args, big bodies.
func TestDataMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var rc Receipt
		fill(r, reflect.ValueOf(&rc).Elem())
		sameAsEncodingJSON(t, &rc)
		sameAsEncodingJSON(t, rc)
		var req InvocationRequest
		fill(r, reflect.ValueOf(&req).Elem())
		sameAsEncodingJSON(t, &req)
		sameAsEncodingJSON(t, req)
	}
	big := strings.Repeat(strings.Join(hostile, ""), 1<<14) // over 1 MiB
	sameAsEncodingJSON(t, &Receipt{Body: big, Result: big, ReceiptSummary: ReceiptSummary{StartedAt: times[1], FinishedAt: times[2]}})
	sameAsEncodingJSON(t, &InvocationRequest{Body: big})
	sameAsEncodingJSON(t, (*Receipt)(nil))
	sameAsEncodingJSON(t, (*InvocationRequest)(nil))
	sameAsEncodingJSON(t, map[string]string{"other": "<data>"})
}

// The receipt of a call, the event a worker appends for every call, is encoded
// in one allocation (encoding/json took four, its times written apart).
func TestReceiptEventAllocatesOnce(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	rc := &Receipt{ReceiptSummary: ReceiptSummary{InvocationID: "inv_01jabcdefghjkmnpqrstvwxyz0", Trace: "t_0123456789abcdef", Actor: OwnerActor,
		Key: "ECHO", Type: "fn", Runner: "fn", OK: true, Ran: true, Material: true, Status: StatusProvenMaterialResult,
		StartedAt: at, FinishedAt: at.Add(time.Millisecond), DurationMS: 1.234, Fingerprints: Fingerprints{Input: Fingerprint("a"), Output: Fingerprint("b"), Contract: Fingerprint("c")}},
		Body: "hello", Result: "hello", Worker: "node-1/3", BreakerGeneration: 1}
	var ev Event
	var err error
	n := allocstest.PerRun(t, 100, func() { ev, err = NewEventWithID("r1", at, TypeReceipt, "engine:node-1", rc) })
	if want, _ := json.Marshal(rc); err != nil || !bytes.Equal(ev.Data, want) {
		t.Fatalf("data %s, %v; want %s", ev.Data, err, want)
	}
	if n > 1 {
		t.Errorf("NewEventWithID of a receipt allocates %v times; want 1", n)
	}
}

// What a receipt's data costs to encode: directly, and through encoding/json.
func BenchmarkReceiptData(b *testing.B) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	rc := &Receipt{ReceiptSummary: ReceiptSummary{InvocationID: "inv_01jabcdefghjkmnpqrstvwxyz0", Trace: "t_0123456789abcdef", Actor: OwnerActor,
		Key: "ECHO", Type: "fn", Runner: "fn", OK: true, Ran: true, Material: true, Status: StatusProvenMaterialResult,
		StartedAt: at, FinishedAt: at.Add(time.Millisecond), DurationMS: 1.234, Fingerprints: Fingerprints{Input: Fingerprint("a"), Output: Fingerprint("b"), Contract: Fingerprint("c")}},
		Body: "hello", Result: "hello", Worker: "node-1/3", BreakerGeneration: 1}
	for _, c := range []struct {
		name string
		enc  func(any) ([]byte, error)
	}{{"direct", marshalData}, {"encoding-json", json.Marshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.enc(rc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
