package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPLeanInvoke returns an Op that invokes the echo row with tools/call on the
// session cs opened, sent by the lean keep-alive client RawHTTPInvoke uses (one
// prebuilt request whose JSON-RPC id is numbered afresh for each call, one read
// per answer) instead of the SDK's client, so that at many callers the figure is
// the server's. It needs the server to answer a tools/call with one
// application/json response (the lean client reads no event stream). close
// closes its connections.
func (e *Env) MCPLeanInvoke(cs *sdk.ClientSession) (op Op, close func(), err error) {
	args, _ := json.Marshal(map[string]string{"args": EchoBody})
	zeros := strings.Repeat("0", idDigits)
	body := []byte(`{"jsonrpc":"2.0","id":"bench-` + zeros + `","method":"tools/call","params":{"name":"` + EchoKey + `","arguments":` + string(args) + `}}`)
	c, err := newRawClient(e.Node.URL(), "/mcp", TerminalKey, body, 256,
		"Accept", "application/json, text/event-stream", "Mcp-Session-Id", cs.ID(),
		"Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	if err != nil {
		return nil, nil, err
	}
	c.idAt = bytes.Index(c.req, []byte(`"id":"bench-`)) + len(`"id":"bench-`)
	want := []byte(`{"type":"text","text":"` + EchoBody + `"}`)
	return func(ctx context.Context, i int) error {
		return c.do(ctx, func(status int, body []byte) error {
			if status != http.StatusOK {
				return fmt.Errorf("bench: tools/call %d (lean client): status %d, want %d: %.300s", i, status, http.StatusOK, body)
			}
			if !bytes.Contains(body, want) || bytes.Contains(body, []byte(`"isError":true`)) {
				return fmt.Errorf("bench: tools/call %d (lean client): unexpected answer %.300s", i, body)
			}
			return nil
		})
	}, c.close, nil
}
