package api

import (
	"bytes"
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
	if g, w := got.Header().Get("Content-Length"), strconv.Itoa(got.Body.Len()); out.Shape == nil && g != w {
		t.Errorf("Content-Length %q, want %s", g, w)
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
