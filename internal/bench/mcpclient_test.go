package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/bench"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cannedAnswer is a tools/call answer of the shape and size capdir's /mcp writes
// for the echo row, after its JSON-RPC id.
const cannedAnswer = `,"result":{"_meta":{"capdir/invocation_id":"01JF0000000000000000000000","capdir/status":"OK"},` +
	`"content":[{"type":"text","text":"` + bench.EchoBody + `"},{"type":"text","text":"invocation_id: 01JF0000000000000000000000 · OK · receipt: http://127.0.0.1:1/receipt/01JF0000000000000000000000"}],` +
	`"structuredContent":{"result":"` + bench.EchoBody + `","proof":{"ok":true,"ran":true,"status":"OK","invocation_id":"01JF0000000000000000000000",` +
	`"trace":"4bf92f3577b34da6a3ce929d0e0e4736","public_receipt":"http://127.0.0.1:1/receipt/01JF0000000000000000000000"}}}}`

// cannedMCP is a streamable HTTP server that does next to nothing: it opens a
// session on initialize, accepts notifications, has no GET stream, and answers
// every other request with cannedAnswer as one application/json body, as capdir
// answers a tools/call. What a client spends calling it is the client's own.
func cannedMCP(w http.ResponseWriter, r *http.Request) {
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
	switch {
	case len(req.ID) == 0:
		w.WriteHeader(http.StatusAccepted)
	case req.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "canned")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+cannedAnswer)
	}
}

// BenchmarkMCPClient is what a client spends on one tools/call of the echo row,
// against a server that does next to nothing (cannedMCP): the SDK's client on
// one session, and net/http's client posting the same request and reading the
// answer (what the dispatch rows' client does). cpu-us/op is the process's CPU
// time per call, the canned server's included (the same for both); the
// allocations are the clients' but for the canned server's few hundred bytes.
func BenchmarkMCPClient(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(cannedMCP))
	defer srv.Close()
	hc := srv.Client()
	hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"args": bench.EchoBody}
	sdkCall := func() error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bench.EchoKey, Arguments: args})
		if err == nil && (res.IsError || len(res.Content) != 2) {
			b.Errorf("unexpected result %+v", res)
		}
		return err
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": bench.EchoKey, "arguments": args}})
	httpCall := func() error {
		resp, err := hc.Post(srv.URL, "application/json", bytes.NewReader(req))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && !strings.Contains(string(body), bench.EchoBody) {
			b.Errorf("unexpected answer %s", body)
		}
		return err
	}
	for _, c := range []struct {
		name string
		call func() error
	}{{"sdk", sdkCall}, {"net-http", httpCall}} {
		b.Run(c.name+"-seq", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
		b.Run(c.name+"-par64", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(max(1, bench.Parallel/runtime.GOMAXPROCS(0))) // Parallel callers
			cpu0 := cpuTime(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.call(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}
