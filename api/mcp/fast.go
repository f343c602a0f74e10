package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/capdir/capdir/internal/loopback"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// The tools/call fast path. A tools/call is the one request an MCP client sends
// at a rate: the SDK would decode it with a fresh decoder, hand it to the
// session's single read loop and answer it on an event stream. A POST of an open,
// initialized session that holds exactly one JSON-RPC request, tools/call with a
// name and arguments, is instead decoded once here, dispatched in the request's
// own goroutine (callers of one session run side by side) and answered with one
// application/json response, which streamable HTTP clients accept as they accept a
// stream. It runs the same code as the SDK's path (handleCall, or search mode's
// tools) and writes the JSON-RPC response the SDK writes for it.
//
// Everything else goes to the SDK untouched, the body included: initialize,
// tools/list, notifications, responses, GET streams, DELETE, batches, malformed
// or oversized bodies, unknown sessions, a session not yet initialized, a request
// with _meta or fields this path does not read, a protocol version or headers it
// does not take, an unknown tool name in search mode. Their answers are the SDK's,
// as before. The credential was checked before either path.

// fastVersions are the Mcp-Protocol-Version values the fast path answers for
// (none: the client has not said). Later versions carry per-request headers and
// _meta the SDK checks.
var fastVersions = []string{"", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// maxDepth is the deepest nesting the SDK decodes; deeper bodies are its to refuse.
const maxDepth = 1000

// fastRequest is the one JSON-RPC request the fast path reads: any other field
// sends the body to the SDK.
type fastRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// fastParams are tools/call's params as the fast path reads them.
type fastParams struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// fastState is what the fast path reads and builds for one call, allocated at once.
type fastState struct {
	req    fastRequest
	params fastParams
	call   sdk.CallToolRequest
	raw    sdk.CallToolParamsRaw
	extra  sdk.RequestExtra
}

const fastFlags = sjson.DisallowUnknownFields | sjson.DontMatchCaseInsensitiveStructFields | sjson.ZeroCopy

// serveSession serves a request of the open session s under its credential: a
// POST the fast path takes is answered here, anything else by the SDK. The POST
// holds the session's idle timer either way.
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, s *session) {
	if r.Method == http.MethodDelete {
		s.ending() // before the SDK answers: a call sent after its answer is the SDK's to refuse
		h.sdk.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.sdk.ServeHTTP(w, r)
		return
	}
	if !s.busy() {
		h.sdk.ServeHTTP(w, r) // closing: the SDK says the session is gone
		return
	}
	defer s.done()
	body, whole := takeBody(r, h.cfg.MaxBody)
	if whole && fastHeaders(r) && h.fastCall(w, r, s, body) {
		return
	}
	if whole {
		if msg := idRefusal(body); msg != "" { // the fast path takes no such id
			answerBadID(w, msg)
			return
		}
	}
	h.sdk.ServeHTTP(w, r) // the body as it came
}

// fastHeaders reports whether r's headers are those of a plain POST the SDK
// would take: JSON in, both answers accepted, no resumption, a protocol version
// the fast path answers, and a Host the SDK's DNS rebinding protection lets by.
func fastHeaders(r *http.Request) bool {
	if r.Header.Get("Content-Type") != "application/json" || len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	known := false
	for _, v := range fastVersions {
		known = known || v == version
	}
	if !known || !accepts(r.Header.Values("Accept")) {
		return false
	}
	if loopback.Reached(r) && !loopback.Host(r.Host) {
		return false
	}
	return true
}

// accepts reports whether Accept names both application/json and
// text/event-stream (parameters aside, any case).
func accepts(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for v != "" {
			var t string
			t, v, _ = strings.Cut(v, ",")
			t, _, _ = strings.Cut(t, ";")
			t = strings.TrimSpace(t)
			jsonOK = jsonOK || strings.EqualFold(t, "application/json")
			streamOK = streamOK || strings.EqualFold(t, "text/event-stream")
		}
	}
	return jsonOK && streamOK
}

// takeBody reads r's body as readBody does and puts back in its place what
// reads the same bytes again (those read, then the rest), for the SDK.
func takeBody(r *http.Request, limit int64) ([]byte, bool) {
	body, whole := readBody(r.Body, r.ContentLength, limit)
	if whole {
		r.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}
	return body, whole
}

// readBody reads up to limit bytes of body (length, its Content-Length, sizes the
// buffer when it is known); whole is false when there is more
// (the SDK refuses it as too large) or reading failed (the SDK says so).
func readBody(body io.Reader, length, limit int64) ([]byte, bool) {
	var buf bytes.Buffer
	if length > 0 && length <= limit {
		buf.Grow(int(length) + bytes.MinRead) // ReadFrom reads on until EOF
	}
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	return buf.Bytes(), err == nil && n <= limit
}

// fastCall answers body, one tools/call of s, and reports true; or reports false,
// having written nothing, when the SDK is to answer it.
func (h *Handler) fastCall(w http.ResponseWriter, r *http.Request, s *session, body []byte) bool {
	if !s.initialized() {
		return false // the SDK refuses a call before initialize
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || deeper(trimmed, maxDepth) {
		return false
	}
	st := new(fastState)
	req, p := &st.req, &st.params
	if rest, err := sjson.Parse(trimmed, req, fastFlags); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		return false
	}
	if req.JSONRPC != "2.0" || req.Method != "tools/call" || !plainID(req.ID) || len(req.Params) == 0 || req.Params[0] != '{' {
		return false
	}
	if rest, err := sjson.Parse(req.Params, p, fastFlags); err != nil || len(bytes.TrimSpace(rest)) != 0 || p.Name == nil {
		return false
	}
	if bytes.Equal(p.Arguments, []byte("null")) {
		p.Arguments = nil // as the SDK reads an omitempty raw message
	}
	st.raw = sdk.CallToolParamsRaw{Name: *p.Name, Arguments: p.Arguments}
	st.extra = sdk.RequestExtra{Header: r.Header}
	call := &st.call
	*call = sdk.CallToolRequest{Params: &st.raw, Extra: &st.extra}
	handler := s.fastHandler(*p.Name)
	if handler == nil {
		return false // search mode's unknown tool: the SDK's error
	}
	if s.mode == modeTools {
		if err := h.load(s); err != nil {
			return false // the SDK's path reads again and answers the error
		}
	}
	res, err := handler(r.Context(), call)
	if err != nil {
		return false // never: capdir's handlers answer tool errors as results
	}
	if res.Content == nil {
		res.Content = []sdk.Content{} // as the SDK sends it: never null
	}
	writeResult(w, req.ID, res)
	return true
}

// fastHandler is the handler of tool name in s: every name in tools mode (a name
// it does not list still reaches the gate), search mode's three tools, else nil.
func (s *session) fastHandler(name string) sdk.ToolHandler {
	if s.mode == modeTools {
		return s.handleCall
	}
	switch name {
	case "search":
		return s.search
	case "describe":
		return s.describe
	case "call":
		return s.call
	}
	return nil
}

// plainID reports whether id is a JSON-RPC id the SDK writes back byte for byte:
// an integer of magnitude up to maxExactID (a larger one is refused: idRefusal),
// or a string without escapes.
func plainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false // a notification
	}
	if id[0] == '"' {
		if len(id) < 2 || id[len(id)-1] != '"' {
			return false
		}
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(id) && -maxExactID <= n && n <= maxExactID
}

// deeper reports whether JSON data nests objects and arrays deeper than limit.
func deeper(data []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > limit {
				return true
			}
		case b == '}' || b == ']':
			depth = max(depth-1, 0)
		}
	}
	return false
}

// writeResult writes the JSON-RPC response of id carrying res, encoded as the SDK
// encodes it (HTML characters unescaped by the encoder, escaped by the SDK's
// MarshalJSON), as one application/json body.
func writeResult(w http.ResponseWriter, id json.RawMessage, res *sdk.CallToolResult) {
	bp := resultBufs.Get().(*[]byte)
	b := appendResponse((*bp)[:0], id, res)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	if cap(b) <= 64<<10 {
		*bp = b
		resultBufs.Put(bp)
	}
}

// appendResponse appends the JSON-RPC response of id carrying res: written
// field by field when appendResult takes res, else by encodeResponse.
func appendResponse(dst []byte, id json.RawMessage, res *sdk.CallToolResult) []byte {
	b := append(dst, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	if b, ok := appendResult(b, res); ok {
		return append(b, '}')
	}
	return encodeResponse(dst, id, res)
}

// encodeResponse appends the JSON-RPC response of id carrying res, res encoded by
// encoding/json as the SDK encodes it; an error encoding it is answered as the
// JSON-RPC error -32603.
func encodeResponse(dst []byte, id json.RawMessage, res *sdk.CallToolResult) []byte {
	buf := bytes.NewBuffer(dst)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":`)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		buf.Truncate(len(dst))
		buf.WriteString(`{"jsonrpc":"2.0","id":`)
		buf.Write(id)
		buf.WriteString(`,"error":{"code":-32603,"message":`)
		msg, _ := json.Marshal("mcp: encoding the result: " + err.Error())
		buf.Write(msg)
		buf.WriteString(`}`)
	} else {
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
