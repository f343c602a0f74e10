package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// reflected is out as writeJSON (encoding/json) answers it.
func reflected(out *DispatchResponse) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	writeJSON(rec, 200, out)
	return rec
}

func sameAnswer(t *testing.T, out *DispatchResponse) {
	t.Helper()
	want := reflected(out)
	got := httptest.NewRecorder()
	writeDispatchResponse(got, out)
	if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
		t.Fatalf("hand-encoded answer\n%s\nwant (encoding/json)\n%s", got.Body.Bytes(), want.Body.Bytes())
	}
	if g, w := got.Header().Get("Content-Type"), want.Header().Get("Content-Type"); g != w {
		t.Errorf("Content-Type %q, want %q", g, w)
	}
	// The handler names the length of a body net/http would chunk; a shorter
	// one's net/http names itself (TestDispatchAnswerHasItsLength).
	want200 := ""
	if got.Body.Len() >= selfLengthUpTo {
		want200 = strconv.Itoa(got.Body.Len())
	}
	if g := got.Header().Get("Content-Length"); out.Shape == nil && g != want200 {
		t.Errorf("Content-Length %q, want %q", g, want200)
	}
}

// Every hand-encoded answer reaches the client with its Content-Length, never
// chunked: a short one's from net/http, a long one's from the handler.
func TestDispatchAnswerHasItsLength(t *testing.T) {
	for _, n := range []int{0, 100, selfLengthUpTo - 200, selfLengthUpTo, 100000} {
		out := response("t", strings.Repeat("x", n), "inv_1", "http://x/receipt/inv_1", "OK", true, true, true)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeDispatchResponse(w, out) }))
		res, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.ContentLength != int64(len(body)) || len(res.TransferEncoding) != 0 || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("a result of %d bytes: Content-Length %d for %d bytes, transfer encoding %v, Content-Type %q",
				n, res.ContentLength, len(body), res.TransferEncoding, res.Header.Get("Content-Type"))
		}
	}
}

func response(trace, result, inv, url, status string, ok, ran, withResult bool) *DispatchResponse {
	out := &DispatchResponse{OK: ok, Ran: ran, Trace: trace, result: result,
		Proof: Proof{OK: ok, InvocationID: inv, PublicReceipt: url, Status: status}}
	if withResult {
		out.Result = &out.result
	}
	return out
}

func TestDispatchAnswerIsWhatEncodingJSONWrites(t *testing.T) {
	for _, out := range []*DispatchResponse{
		response("tr_1", "hello", "inv_1", "http://x/receipt/inv_1", "OK", true, true, true),
		response("", "", "", "", "", false, false, false),
		response("t", `<a href="x">&amp;</a> "q" \ `+"\n\t\x00\u2028\xff", "inv_<>", "https://h/p?a=1&b=2", "ERR:upstream:502", false, true, true),
		response("t", strings.Repeat("long result ", 10000), "inv_2", "u", "OK", true, true, true),
	} {
		sameAnswer(t, out)
	}
	// A shape answer goes through encoding/json as before.
	shaped := response("t", "", "inv_3", "u", "OK:shape", true, false, false)
	shaped.Shape = map[string]any{"type": "object"}
	sameAnswer(t, shaped)
}

func FuzzDispatchAnswer(f *testing.F) {
	f.Add("tr_1", "hello", "inv_1", "http://x/receipt/inv_1", "OK", true, true, true)
	f.Add("<&>", "\u2028\xff\x00", "", "", "ERR", false, true, false)
	f.Fuzz(func(t *testing.T, trace, result, inv, url, status string, ok, ran, withResult bool) {
		sameAnswer(t, response(trace, result, inv, url, status, ok, ran, withResult))
	})
}
