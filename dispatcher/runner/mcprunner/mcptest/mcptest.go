// Package mcptest is an upstream MCP server for tests: the Go SDK's server in
// process over streamable HTTP (httptest), with a few tools of known behaviour.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BlockFor bounds how long the block tool holds a call nobody cancelled: far
// beyond any test's call timeout.
const BlockFor = 3 * time.Second

// Server is an SDK MCP server in process over streamable HTTP with the
// tools the tests call (each takes any object): echo (its arguments as JSON), block (answers when the
// call ends), big (args bytes 'x'), headers (the Authorization header it got),
// fail (isError with "boom"), and structured (structuredContent {"n":1}).
func Server(t testing.TB) (*mcp.Server, *httptest.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	tools := map[string]mcp.ToolHandler{
		"echo": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(string(req.Params.Arguments)), nil
		},
		// block answers when the call is cancelled, or after BlockFor (a
		// cancellation the server never saw must not hold its Close forever).
		"block": func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-time.After(BlockFor):
			}
			return text("late"), nil
		},
		"big": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := strconv.Atoi(args(req)["args"].(string))
			return text(strings.Repeat("x", n)), nil
		},
		"headers": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("auth=" + req.Extra.Header.Get("Authorization") + " args=" + string(req.Params.Arguments)), nil
		},
		"fail": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("boom")
			r.IsError = true
			return r, nil
		},
		"structured": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "ignored"}}}, nil
		},
	}
	for name, h := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	hs := httptest.NewServer(Handler(srv))
	t.Cleanup(hs.Close)
	return srv, hs
}

// Handler serves srv over streamable HTTP.
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}
