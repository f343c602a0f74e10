package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// decoded is b as encoding/json's decoder reads a dispatch body (the path every
// body not of the plain form takes), and whether it took it.
func decoded(b []byte) (dispatchBody, bool) {
	var in dispatchBody
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return in, false
	}
	return in, true
}

var plainBodies = []string{
	`{"key":"GREET","body":"Ada"}`,
	`{"key":"GREET"}`,
	`{}`,
	" \r\n\t{ \"body\" : \"x\" , \"key\" : \"K\" , \"shape\" : true } \n",
	`{"key":"SUM","body":{"a":1,"b":[1,2,{"c":"}]"}],"s":"q\"uo}te"}}`,
	`{"key":"K","body":null,"shape":false}`,
	`{"key":"K","body":"café ☕"}`,
	`{"key":"K","body":{}}`,
}

var otherBodies = []string{
	``, `null`, `[]`, `{"key":"K"} x`, `{"key":"K"}{}`, `{"KEY":"K"}`, `{"key":"K","key":"L"}`,
	`{"key":"a\nb"}`, `{"key":"a\u0041"}`, "{\"key\":\"\xff\"}", `{"key":1}`, `{"key":null}`,
	`{"body":[1]}`, `{"body":{"a":}}`, `{"body":{"a":1}`, `{"shape":"yes"}`, `{"shape":truex}`,
	`{"extra":1}`, `{"key":"K",}`, `{"key" "K"}`, `{"body":nul}`, "\ufeff{}", `{"body":{"a":1]}`,
}

func TestPlainDispatchBodiesAreParsedByHandAsTheDecoderReadsThem(t *testing.T) {
	for _, s := range plainBodies {
		var got dispatchBody
		if !parseDispatchBody([]byte(s), &got) {
			t.Errorf("%s: not taken by the hand parser", s)
			continue
		}
		want, ok := decoded([]byte(s))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: hand-parsed %+v, the decoder %+v (ok %v)", s, got, want, ok)
		}
	}
	for _, s := range otherBodies {
		if parseDispatchBody([]byte(s), new(dispatchBody)) {
			t.Errorf("%s: taken by the hand parser; it is the decoder's", s)
		}
	}
}

func FuzzDispatchBodyParsedAsTheDecoderReadsIt(f *testing.F) {
	for _, s := range append(append([]string{}, plainBodies...), otherBodies...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got dispatchBody
		if !parseDispatchBody(b, &got) {
			return
		}
		want, ok := decoded(b)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: hand-parsed %+v, the decoder %+v (ok %v)", b, got, want, ok)
		}
	})
}

// read is readDispatchBody of body, sent with its length or chunked.
func read(t *testing.T, body string, chunked bool, limit int64) (dispatchBody, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/dispatch", strings.NewReader(body))
	if chunked {
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = -1
	}
	return readDispatchBody(httptest.NewRecorder(), r, limit)
}

func TestDispatchBodyOwnsItsBytesAfterTheBufferIsReused(t *testing.T) {
	first, err := read(t, `{"key":"FIRST","body":{"a":"first"}}`, false, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // the pool hands the buffer back out
		if _, err := read(t, `{"key":"XXXXX","body":{"a":"xxxxx"}}`, true, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if first.Key != "FIRST" || string(first.Body.Args) != `{"a":"first"}` {
		t.Fatalf("first body changed when its buffer was reused: %+v", first)
	}
}

func TestDispatchBodyErrorsAreTheDecodersSentences(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{``, "empty body"},
		{`{"key":"K"} x`, "malformed JSON at byte"},
		{`{"key":"K"}{}`, "data after the JSON object"},
		{`{"key":1}`, `"key" must be a string naming a row`},
		{`{"shape":"yes"}`, `"shape" must be true or false`},
		{`{"extra":1}`, `unknown field "extra": a dispatch body has only "key", "body" and "shape"`},
		{`{"key":"K"`, "the body ends before its JSON object is closed"},
	} {
		for _, chunked := range []bool{false, true} {
			_, err := read(t, tc.body, chunked, 1<<20)
			if err == nil || !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q (chunked %v): %v, want a bad request saying %q", tc.body, chunked, err, tc.want)
			}
		}
	}
	big := `{"key":"K","body":"` + strings.Repeat("x", 100) + `"}`
	for _, chunked := range []bool{false, true} {
		if _, err := read(t, big, chunked, 64); !errors.Is(err, ErrPayloadTooLarge) {
			t.Errorf("a body over the limit (chunked %v): %v, want ErrPayloadTooLarge", chunked, err)
		}
	}
}

// A length declared is not memory taken: a body that says it is 16 MiB gets a
// buffer as large as what arrives, not as what it declared.
func TestDispatchBodyDeclaredLengthIsNotAllocatedAhead(t *testing.T) {
	const declared = 16 << 20
	r := httptest.NewRequest(http.MethodPost, "/api/dispatch", strings.NewReader(`{"key":"K","body":"x"}`))
	r.ContentLength = declared
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	in, err := readDispatchBody(httptest.NewRecorder(), r, declared)
	runtime.ReadMemStats(&after)
	if err != nil || in.Key != "K" {
		t.Fatalf("read %+v, %v", in, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("reading a 22-byte body declared as %d bytes allocated %d bytes", declared, got)
	}
}
