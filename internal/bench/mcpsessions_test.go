package bench

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Calls spread over several sessions go to session i mod n: with the second of
// three sessions closed, calls 1 and 4 fail and the others are answered.
func TestMCPInvokeSessionsSpreadsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	ctx := context.Background()
	e, err := StartEnv(ctx, EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var css []*sdk.ClientSession
	for range 3 {
		cs, err := e.MCPSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		css = append(css, cs)
	}
	op := MCPInvokeSessions(css)
	for i := range 6 {
		if err := op(ctx, i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	css[1].Close()
	for i := range 6 {
		err := op(ctx, i)
		if closed := i%3 == 1; closed != (err != nil) {
			t.Errorf("call %d after session 1 closed: %v", i, err)
		}
	}
}
