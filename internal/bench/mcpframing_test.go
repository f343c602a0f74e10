package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"github.com/capdir/capdir/internal/bench"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// leanAnswer is a tools/call answer with the echo row's result as its one text
// content and nothing else: what the SDK's client would read were the answer as
// small as a result can be.
const leanAnswer = `,"result":{"content":[{"type":"text","text":"` + bench.EchoBody + `"}]}}`

// framedMCP is cannedMCP with its tools/call answer framed as frame says:
// "json" as capdir writes it (application/json, Content-Length), "json-flushed"
// the same flushed before the handler returns, "json-chunked" without a
// Content-Length, "json-newline" with a trailing newline, "sse" as one event of
// a text/event-stream (as the SDK's server answers), "json-lean" leanAnswer.
func framedMCP(frame string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if len(req.ID) == 0 || req.Method == "initialize" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			cannedMCP(w, r)
			return
		}
		answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + cannedAnswer
		h := w.Header()
		switch frame {
		case "json-lean":
			answer = `{"jsonrpc":"2.0","id":` + string(req.ID) + leanAnswer
		case "json-newline":
			answer += "\n"
		case "sse":
			h.Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: "+answer+"\n\n")
			return
		}
		h.Set("Content-Type", "application/json")
		if frame != "json-chunked" {
			h.Set("Content-Length", strconv.Itoa(len(answer)))
		}
		io.WriteString(w, answer)
		if frame == "json-flushed" || frame == "json-chunked" {
			http.NewResponseController(w).Flush()
		}
	}
}

// BenchmarkMCPClientFraming is BenchmarkMCPClient's sdk-seq and sdk-par64 rows
// against a canned server framing its answer each way framedMCP knows, and with
// the client options a caller after throughput would set (sse-off: no standalone
// stream; no-retry: MaxRetries -1); default-transport is the client as it comes,
// net/http's default transport keeping 2 idle connections per host, where the
// others keep 256. cpu-us/op is the process's CPU per call.
func BenchmarkMCPClientFraming(b *testing.B) {
	type variant struct {
		name, frame string
		tr          func(*sdk.StreamableClientTransport)
		pooled      bool // false: net/http's default transport, 2 idle connections per host
	}
	variants := []variant{
		{"json", "json", nil, true}, {"json-flushed", "json-flushed", nil, true},
		{"json-chunked", "json-chunked", nil, true}, {"json-newline", "json-newline", nil, true},
		{"sse", "sse", nil, true}, {"json-lean", "json-lean", nil, true},
		{"json-sse-off-no-retry", "json", func(t *sdk.StreamableClientTransport) {
			t.DisableStandaloneSSE = true
			t.MaxRetries = -1
		}, true},
		{"json-default-transport", "json", nil, false},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			srv := httptest.NewServer(framedMCP(v.frame))
			defer srv.Close()
			hc := srv.Client()
			if v.pooled {
				hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
			}
			ctx := context.Background()
			tr := &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}
			if v.tr != nil {
				v.tr(tr)
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := map[string]any{"args": bench.EchoBody}
			call := func() error {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bench.EchoKey, Arguments: args})
				if err == nil && (res.IsError || len(res.Content) == 0) {
					b.Errorf("unexpected result %+v", res)
				}
				return err
			}
			b.Run("seq", func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime(b)
				for b.Loop() {
					if err := call(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			})
			b.Run("par64", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(max(1, bench.Parallel/runtime.GOMAXPROCS(0)))
				cpu0 := cpuTime(b)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := call(); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			})
		})
	}
}
