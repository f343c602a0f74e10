package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ownerHeader puts the owner key on every request of an MCP client.
type ownerHeader struct{ next http.RoundTripper }

func (o ownerHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-terminal-key", TerminalKey)
	return o.next.RoundTrip(r)
}

// MCPSession opens an MCP session on the node as the owner, with the SDK's own
// client over streamable HTTP (the Env's connection pool). Close it when done.
func (e *Env) MCPSession(ctx context.Context) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   e.Node.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: ownerHeader{e.Client.Transport}, Timeout: e.Client.Timeout},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: MCP session: %w", err)
	}
	return cs, nil
}

// MCPInvoke returns an Op that invokes the echo row as an MCP client does,
// tools/call on cs (one session shared by every caller), and checks the result.
func MCPInvoke(cs *sdk.ClientSession) Op {
	args := map[string]any{"args": EchoBody}
	return func(ctx context.Context, i int) error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: EchoKey, Arguments: args})
		if err != nil {
			return fmt.Errorf("bench: tools/call %d: %w", i, err)
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("bench: tools/call %d: isError=%v, %d contents", i, res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != EchoBody {
			return fmt.Errorf("bench: tools/call %d: unexpected result %+v", i, res.Content[0])
		}
		return nil
	}
}

// MCPSessions is how many sessions the SDK's client opens for the row that
// spreads Parallel callers over several sessions: the SDK's client serialises
// part of every call on its session's connection (it decodes the request's
// params again under the connection's lock to find a protocol version to send),
// so callers that should not queue on one another use sessions of their own.
const MCPSessions = 8

// MCPInvokeSessions returns an Op that invokes the echo row as MCPInvoke does,
// call i on session i mod len(css).
func MCPInvokeSessions(css []*sdk.ClientSession) Op {
	ops := make([]Op, len(css))
	for i, cs := range css {
		ops[i] = MCPInvoke(cs)
	}
	return func(ctx context.Context, i int) error { return ops[i%len(ops)](ctx, i) }
}

// mcpSessions measures the SDK's client with Parallel callers spread over
// MCPSessions sessions against POST /api/dispatch with net/http's client,
// interleaved: how the SDK's client runs when its callers do not queue on one
// session's connection.
func (r *runner) mcpSessions(ctx context.Context, e *Env) error {
	css := make([]*sdk.ClientSession, 0, MCPSessions)
	defer func() {
		for _, cs := range css {
			cs.Close()
		}
	}()
	for range MCPSessions {
		cs, err := e.MCPSession(ctx)
		if err != nil {
			return err
		}
		css = append(css, cs)
	}
	inFlight := ", " + strconv.Itoa(Parallel) + " in flight"
	ref, got, err := Paired(ctx, ScenarioMCP, "fn via POST /api/dispatch"+inFlight+" (reference)",
		"fn via MCP tools/call"+inFlight+" over "+strconv.Itoa(MCPSessions)+" sessions",
		e.HTTPInvoke(), MCPInvokeSessions(css), r.c.invokePar, Parallel, r.c.budget)
	if err != nil {
		return err
	}
	got.noteRatio(ref, "POST /api/dispatch", "http_ratio")
	r.add(ref, got)
	return nil
}
