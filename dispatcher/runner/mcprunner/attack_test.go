package mcprunner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
)

// hugeAnswers is an upstream that is the SDK's server in everything but
// tools/list and tools/call, which it answers with one application/json body of
// about size bytes: a hostile upstream, or a broken one.
func hugeAnswers(t *testing.T, size int) *httptest.Server {
	srv, _ := mcptest.Server(t)
	sdk := mcptest.Handler(srv)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if req.Method != "tools/list" && req.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			sdk.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		pad := strings.Repeat("x", size)
		if req.Method == "tools/list" {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"tools":[{"name":"echo","description":"`+pad+`","inputSchema":{"type":"object"}}]}}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"content":[{"type":"text","text":"`+pad+`"}]}}`)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// An upstream's answer is read up to MaxAnswerBytes and no further: a larger
// tools/list or tools/call answer fails as unreachable, saying the limit, rather
// than being held in memory whole. One just under it is read.
func TestUpstreamAnswerOverTheLimitIsNotRead(t *testing.T) {
	over := hugeAnswers(t, MaxAnswerBytes+1)
	under := hugeAnswers(t, MaxAnswerBytes-4096)
	r := newRunner(t, Static{"over": {Name: "over", URL: over.URL}, "under": {Name: "under", URL: under.URL}}, nil)

	_, err := r.Tools(context.Background(), "over", 10)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "over 16777216 bytes") {
		t.Fatalf("tools/list of a huge answer: %v; want ErrUnreachable naming the limit", err)
	}
	o := r.Run(context.Background(), runner.Call{Row: mcpRow("over/echo", "")})
	if !errors.Is(o.Err, ErrUnreachable) || !strings.HasPrefix(o.Result, "ERR:mcp:over:unreachable:") || !strings.Contains(o.Result, "over 16777216 bytes") {
		t.Fatalf("tools/call of a huge answer: %.200q (%v)", o.Result, o.Err)
	}
	tools, err := r.Tools(context.Background(), "under", 10)
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools/list just under the limit: %d tools, %v", len(tools), err)
	}
}
