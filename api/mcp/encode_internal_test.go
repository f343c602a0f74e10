package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

// awkward are strings whose JSON escaping differs between encoders: quotes,
// backslashes, every control character, HTML characters, U+2028 and U+2029,
// invalid and truncated UTF-8, multi-byte text.
func awkward() []string {
	out := []string{"", "plain", `q"uote`, `back\slash`, "<b>&amp;</b>", "line\u2028sep\u2029par",
		"\xff", "a\xc3", "\xe2\x80", "héllo · 世界 😀", "ok\x7f", strings.Repeat("<&>", 200)}
	var ctl strings.Builder
	for c := 0; c < 0x20; c++ {
		ctl.WriteByte(byte(c))
	}
	return append(out, ctl.String())
}

// A tool result written field by field is the one encoding/json writes through
// the SDK's MarshalJSON, byte for byte, for every shape capdir's handlers answer
// (a receipt's result, a tool error, search's and describe's text) and every
// awkward string in every string field; a shape it does not write (other
// content, other structuredContent, non-string _meta, input requests) is
// encoded by encoding/json.
func TestResultWrittenAsEncodingJSONWritesIt(t *testing.T) {
	h := &Handler{cfg: Config{PublicURL: "http://127.0.0.1:8080/"}}
	var results []*sdk.CallToolResult
	for _, s := range awkward() {
		rc := receiptOf(s)
		results = append(results,
			h.result(&rc, s), toolError(s),
			&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}},
			&sdk.CallToolResult{Content: []sdk.Content{}, Meta: sdk.Meta{s: s, "b": "x"}},
			&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}, StructuredContent: &CallResult{Result: s}},
		)
	}
	results = append(results, &sdk.CallToolResult{}) // content null, as the SDK would send it
	for _, id := range []string{`1`, `"abc"`, `-9007199254740993`} {
		for _, res := range results {
			if _, ok := appendResult(nil, res); !ok {
				t.Fatalf("appendResult does not take %+v", res)
			}
			got := string(appendResponse(nil, json.RawMessage(id), res))
			want := string(encodeResponse(nil, json.RawMessage(id), res))
			if got != want {
				t.Errorf("written field by field:\n%s\nencoding/json:\n%s", got, want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
		}
	}

	others := []*sdk.CallToolResult{
		{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "t", Meta: sdk.Meta{"k": "v"}}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "t", Annotations: &sdk.Annotations{Priority: 1}}}},
		{Content: []sdk.Content{}, StructuredContent: map[string]any{"count": 1, "rows": []string{"<a>"}}},
		{Content: []sdk.Content{}, Meta: sdk.Meta{"n": 1}},
		{Content: []sdk.Content{}, RequestState: "s"},
	}
	for _, res := range others {
		if _, ok := appendResult(nil, res); ok {
			t.Errorf("appendResult takes %+v, which it does not write", res)
		}
		got := string(appendResponse([]byte("prefix"), json.RawMessage(`7`), res))
		want := string(encodeResponse([]byte("prefix"), json.RawMessage(`7`), res))
		if got != want || !strings.HasPrefix(got, "prefix{") {
			t.Errorf("fallback:\n%s\nwant\n%s", got, want)
		}
	}
}

// A receipt of a fast-path result costs no reflection: appending one allocates
// only the sorted _meta keys.
func TestResultWrittenWithoutReflection(t *testing.T) {
	h := &Handler{cfg: Config{PublicURL: "http://127.0.0.1:8080"}}
	rc := receiptOf("hello")
	res := h.result(&rc, "hello")
	buf := make([]byte, 0, 4096)
	if n := allocstest.PerRun(t, 100, func() { appendResponse(buf[:0], json.RawMessage(`1`), res) }); n > 1 {
		t.Errorf("appending a result allocates %v times, want at most 1", n)
	}
}

// receiptOf is a receipt whose every string field is s.
func receiptOf(s string) wire.Receipt {
	rc := wire.Receipt{Result: s}
	rc.OK, rc.Ran, rc.Status, rc.InvocationID, rc.Trace = s != "", true, s, s, s
	return rc
}
