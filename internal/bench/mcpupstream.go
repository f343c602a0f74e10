package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPUpstreamKey is the row of runner mcp the mcp-upstream scenario calls.
const MCPUpstreamKey = "BENCH_UPSTREAM_ECHO"

// MCPUpstream measures tools/call through capdir's /mcp to a row of runner mcp
// whose upstream is the Go SDK's server in process over streamable HTTP
// (registered with PUT /api/upstreams/bench), against tools/call on that server
// directly. The two calls are interleaved, one of each per round.
func MCPUpstream(ctx context.Context, e *Env, n int, budget time.Duration) ([]Result, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "bench-upstream", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer func() {
		up.CloseClientConnections() // the node's session to it holds a stream open
		up.Close()
	}()
	reg, _ := json.Marshal(map[string]string{"url": up.URL})
	if status, body, err := e.Do(ctx, "PUT", "/api/upstreams/bench", "application/json", reg); err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("bench: register the upstream: %d %s %v", status, body, err)
	}
	err := e.CreateRow(ctx, map[string]any{"key": MCPUpstreamKey, "type": "fn", "runner": "mcp", "target": "bench/echo",
		"content": "# WHAT: echoes through an upstream MCP server in process (benchmark row)"})
	if err != nil && !strings.Contains(err.Error(), "exists") {
		return nil, err
	}
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "capdir-bench", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: up.URL, HTTPClient: e.Client}, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: MCP session to the upstream: %w", err)
	}
	defer direct.Close()
	via, err := e.MCPSession(ctx)
	if err != nil {
		return nil, err
	}
	defer via.Close()
	call := func(cs *sdk.ClientSession, tool string) func(context.Context) error {
		args := map[string]any{"args": EchoBody}
		return func(ctx context.Context) error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return err
			}
			if tc, ok := firstText(res); res.IsError || !ok || !strings.Contains(tc, EchoBody) {
				return fmt.Errorf("bench: tools/call %s answered %+v", tool, res.Content)
			}
			return nil
		}
	}
	calls := []struct {
		f   func(context.Context) error
		lat []time.Duration
	}{{f: call(direct, "echo")}, {f: call(via, MCPUpstreamKey)}}
	round := func(ctx context.Context, _ int) error {
		for i := range calls {
			t := time.Now()
			if err := calls[i].f(ctx); err != nil {
				return err
			}
			calls[i].lat = append(calls[i].lat, time.Since(t))
		}
		return nil
	}
	if err := warmup(ctx, max(100, n/10), 1, round); err != nil {
		return nil, fmt.Errorf("bench: mcp-upstream warm-up: %w", err)
	}
	calls[0].lat, calls[1].lat = nil, nil
	_, el, err := Drive(ctx, n, 1, budget, round)
	if err != nil {
		return nil, fmt.Errorf("bench: mcp-upstream: %w", err)
	}
	d, v := Summarize(calls[0].lat), Summarize(calls[1].lat)
	dr := Result{Scenario: ScenarioMCPUpstream, Name: "upstream MCP server called directly (tools/call)", Unit: "requests", Ops: len(calls[0].lat),
		Seconds: el.Seconds(), P50: d.P50, P90: d.P90, P99: d.P99}
	vr := Result{Scenario: ScenarioMCPUpstream, Name: "mcp row via capdir's /mcp (tools/call)", Unit: "invocations", Ops: len(calls[1].lat),
		Seconds: el.Seconds(), P50: v.P50, P90: v.P90, P99: v.P99}
	addP50, addP99 := v.P50-d.P50, v.P99-d.P99
	vr.Note = fmt.Sprintf("capdir adds %s p50, %s p99 over calling the upstream directly", msCell(addP50), msCell(addP99))
	vr.Values = map[string]float64{"added_p50_ms": ms(addP50), "added_p99_ms": ms(addP99)}
	return []Result{dr, vr}, nil
}

// firstText is the text of res's first content item.
func firstText(res *sdk.CallToolResult) (string, bool) {
	if len(res.Content) == 0 {
		return "", false
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}
