package bench

import (
	"context"
	"fmt"
	"net/http"

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
