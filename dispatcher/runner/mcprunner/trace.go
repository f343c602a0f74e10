package mcprunner

import (
	"context"

	"github.com/capdir/capdir/internal/tracing"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callParams are a tools/call's parameters. When the call is traced (ctx holds
// the upstream span), its traceparent and tracestate travel in the request's
// _meta, which a stdio upstream reads as a streamable HTTP one reads the
// headers (headerTransport sets them); a call made with tracing off sends
// neither.
func callParams(ctx context.Context, tool string, args map[string]any) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if tp := tracing.Outgoing(ctx); tp != "" {
		p.Meta = mcp.Meta{tracing.Header: tp}
		if ts := tracing.Tracestate(ctx); ts != "" {
			p.Meta[tracing.StateHeader] = ts
		}
	}
	return p
}
