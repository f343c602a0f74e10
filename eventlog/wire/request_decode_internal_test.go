package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
	"github.com/capdir/capdir/internal/jsonmember/jsonmembertest"
)

// requestSeeds are request data: as capdir and a bus client write it, and in
// the forms the hand reader must leave to the general decoder.
func requestSeeds(t testing.TB) []string {
	at := time.Date(2026, 12, 6, 4, 5, 6, 789, time.UTC)
	var seeds []string
	for _, req := range []InvocationRequest{
		{InvocationID: "inv_01JX", Trace: "t_0123", Key: "WEATHER", Body: "a|b", Credential: OwnerActor, DirSeq: 41},
		{InvocationID: "inv_01JY", Trace: "t_0124", Key: "WEATHER", Args: json.RawMessage(`{"city":"Oslo","days":[1, 2]}`), Shape: true,
			Credential: BearerCredential, Token: "eyJ.a.b", Parent: "inv_01JW", Depth: 2, Chain: "A>B",
			Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Tracestate: "k=v"},
		{InvocationID: "inv_01JZ", Key: "WEATHER", Body: `{"q":"a \"quoted\" } ] { ["}`, Credential: "nats:acme"},
	} {
		ev, err := NewEvent(at, TypeInvocationRequested, req.Credential, &req)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, string(ev.Data))
	}
	return append(seeds,
		`{}`, ` { } `, `[]`, `"x"`, `null`, `{"key":"K"}`, `{"key":""}`,
		`{"chain":"A\u003eB\u003EC"}`, `{"body":"\u0041\/\n\b\f\r\t\"\\"}`, `{"body":"\u007f\u0000"}`, `{"body":"\u0100"}`,
		`{"key":"K","key":"L"}`, `{"Key":"K"}`, `{"KEY":"K","key":"L"}`, `{"k\u0065y":"K"}`, "{\"\u212aey\":\"K\"}",
		`{"body":null}`, `{"body":7}`, `{"body":"a\nb"}`, `{"body":"\u00e9"}`, `{"body":"é"}`,
		`{"args":null}`, `{"args":"x"}`, `{"args":7}`, `{"args":{ "a" : [ 1 , "}" ] }}`, `{"args":[]}`, `{"args":{}}`,
		`{"shape":true}`, `{"shape":false}`, `{"shape":null}`, `{"shape":"true"}`, `{"shape":1}`,
		`{"dir_seq":1e3}`, `{"dir_seq":-1}`, `{"dir_seq":1.0}`, `{"dir_seq":18446744073709551615}`,
		`{"dir_seq":18446744073709551616}`, `{"dir_seq":007}`, `{"dir_seq":"7"}`,
		`{"depth":9223372036854775807}`, `{"depth":9223372036854775808}`, `{"depth":-1}`, `{"depth":3}`,
		`{"x":{"a":[1,{"b":"}"}],"c":"\\\""},"invocation_id":"inv_1","y":[[]],"z":true,"w":-0.5e-3}`,
		"{\"key\"\t:\r\n\"K\" , \"credential\" : \"owner:terminal-key\"}",
	)
}

// Whatever the hand reader of a request reads, the general decoder
// (Event.DataAs) reads the same from the same data; what it leaves,
// RequestData hands to the general decoder.
func FuzzRequestDataDecodedAsDataAsDecodesIt(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add([]byte(s), "WEATHER")
	}
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		if !json.Valid(data) {
			return // RequestData reads only data decode has checked
		}
		checkRequestReadAsDataAsReadsIt(t, data, key)
	})
}

// checkRequestReadAsDataAsReadsIt fails t when decodeRequest reads data other
// than DataAs does, and reports whether it read it by hand.
func checkRequestReadAsDataAsReadsIt(t *testing.T, data []byte, key string) bool {
	t.Helper()
	ev := Event{Type: TypeInvocationRequested, Data: data}
	var got InvocationRequest
	if !decodeRequest(data, key, &got) {
		return false
	}
	var want InvocationRequest
	if err := ev.DataAs(&want); err != nil {
		t.Fatalf("%s: read by hand as %+v, the decoder refuses it: %v", data, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: read by hand as %+v, the decoder reads %+v", data, got, want)
	}
	return true
}

// capdir's own requests are read by hand, in one allocation (the data's copy,
// which the strings without escapes are cut from), one more for arguments and
// one for each string with an escape; the seeds the
// general decoder must decide are left to it, and RequestData reads them
// through it.
func TestRequestsOfCapdirsFormAreReadByHand(t *testing.T) {
	seeds := requestSeeds(t)
	for i, s := range seeds[:3] {
		var r InvocationRequest
		if !checkRequestReadAsDataAsReadsIt(t, []byte(s), "WEATHER") {
			t.Fatalf("capdir's request %s is left to the general decoder", s)
		}
		data, limit := []byte(s), []float64{1, 3, 2}[i] // 1: arguments and a chain "A\u003eB"; 2: a body with quotes
		if n := allocstest.PerRun(t, 100, func() { r = InvocationRequest{}; decodeRequest(data, "WEATHER", &r) }); n > limit {
			t.Errorf("reading request %d allocates %v times, want at most %v", i, n, limit)
		}
		if r.Key != "WEATHER" || r.InvocationID == "" {
			t.Errorf("request %d read as %+v", i, r)
		}
	}
	for _, s := range []string{`[]`, `"x"`, `null`, `{"key":"K","key":"L"}`, `{"Key":"K"}`, `{"k\u0065y":"K"}`, "{\"\u212aey\":\"K\"}",
		`{"body":null}`, `{"body":7}`, `{"body":"\u00e9"}`, `{"body":"\ud83d\ude00"}`, `{"body":"é"}`, `{"args":null}`, `{"args":"x"}`, `{"shape":null}`,
		`{"dir_seq":1e3}`, `{"depth":9223372036854775808}`, `{"depth":-1}`} {
		var r InvocationRequest
		if decodeRequest([]byte(s), "K", &r) {
			t.Errorf("%s was read by hand as %+v; it is the general decoder's to read", s, r)
		}
	}
	// RequestData adds nothing to the hand reader's allocations: the request it
	// fills stays on its caller's stack (only the general decoder's target goes
	// to the heap, on its own path).
	own := Event{Type: TypeInvocationRequested, Data: []byte(seeds[0])}
	var key string
	if n := allocstest.PerRun(t, 100, func() {
		var r InvocationRequest
		own.RequestData(&r, "WEATHER")
		key = r.Key
	}); n > 1 || key != "WEATHER" {
		t.Errorf("RequestData of capdir's request allocates %v times (key %q), want at most 1", n, key)
	}
	// What the hand reader leaves, RequestData reads as DataAs does.
	for _, s := range []string{`{"Key":"K","body":"a\nb"}`, `{"body":"\u00e9\u0041"}`, `{"body":"é","dir_seq":1e3}`, `{"args":null,"depth":-1}`} {
		ev := Event{Type: TypeInvocationRequested, Data: []byte(s)}
		var got, want InvocationRequest
		errGot, errWant := ev.RequestData(&got, "K"), ev.DataAs(&want)
		if (errGot == nil) != (errWant == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: RequestData %+v (%v), DataAs %+v (%v)", s, got, errGot, want, errWant)
		}
	}
}

// Random objects of the request's names (and other spellings of them, and
// other names) with values of every kind, spaced every way JSON allows: the
// hand reader reads each as the general decoder does, or leaves it to it; and
// it reads by hand the ones of capdir's form.
func TestRequestsReadByHandAsDataAsReadsThemOverRandomObjects(t *testing.T) {
	names := append(append([]string{}, requestNames...), "Key", "INVOCATION_ID", "Dir_Seq", "result", "k\\u0065y", "x", "")
	values := []string{
		`"WEATHER"`, `"inv_01"`, `"owner:terminal-key"`, `"a|b"`, `"a\"b"`, `"a\\"`, `"\u00e9"`, `"é"`, `""`,
		`"A\u003eB"`, `"\u0041\/\n\b\f\r\t"`, `"\u007f\u0000\u001F"`, `"\u0080"`, `"\ud83d\ude00"`,
		`0`, `7`, `9223372036854775807`, `9223372036854775808`, `18446744073709551615`, `18446744073709551616`, `-1`, `1.5`, `1e2`,
		`true`, `false`, `null`, `{}`, `[]`, `{"a":"}\"{","b":[1,{"c":"]"}]}`, `[["\\"],{}]`, `{ "a" : 1 }`,
	}
	var byHand int
	jsonmembertest.Objects(t, 20000, names, values, func(b []byte) {
		if checkRequestReadAsDataAsReadsIt(t, b, "WEATHER") {
			byHand++
		}
	})
	if byHand < 1000 {
		t.Errorf("only %d of 20000 objects were read by hand", byHand)
	}
}
