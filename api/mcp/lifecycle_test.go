package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/internal/nodetest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// awaitSessions waits until the node's MCP handler follows want sessions.
func awaitSessions(t *testing.T, n *capdir.Node, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for n.MCP().OpenSessions() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d sessions, want %d", what, n.MCP().OpenSessions(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A session ends when its client closes it, when its token expires, and when its
// token is found revoked.
func TestSessionEnds(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	cs, err := dial(n, owner(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	awaitSessions(t, n, 1, "after connecting")
	cs.Close()
	awaitSessions(t, n, 0, "after the client's close")

	// A token's times are whole seconds: issued at now's second, a TTL of 2s
	// leaves it at least one second to connect in (1s could leave none).
	short, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), 2*time.Second)
	connect(t, n, bearer(short), "", nil)
	awaitSessions(t, n, 1, "a short token's session")
	awaitSessions(t, n, 0, "once its token expired")

	tok, claims := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	connect(t, n, bearer(tok), "", nil)
	awaitSessions(t, n, 1, "a token's session")
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+claims.ID, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	postRow(t, n, greetRow("NEXT")) // the next directory change finds the token revoked
	awaitSessions(t, n, 0, "once its token was revoked")
}

// Stopping a node with a session open (its stream of notifications included)
// ends the session and does not wait out the shutdown timeout.
func TestStopWithOpenSession(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	cs := connect(t, n, owner(), "", make(chan struct{}, 1))
	if got := call(t, cs, "GREET", map[string]any{"args": "Ada"}); got.IsError {
		t.Fatalf("GREET: %q", text(got))
	}
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("stop with an MCP session open: %v (after %v)", err, time.Since(start))
	}
}

// A session's stream of notifications outlives the HTTP server's read and write
// timeouts: a row written after both have passed is still announced.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.API.DispatchWait = 100 * time.Millisecond
		c.HTTP.ReadTimeout = 200 * time.Millisecond
		c.HTTP.WriteTimeout = 300 * time.Millisecond
	})
	changed := make(chan struct{}, 1)
	cs := connect(t, n, owner(), "", changed)
	time.Sleep(600 * time.Millisecond) // both timeouts pass: nothing to wait for but time
	postRow(t, n, greetRow("LATE"))
	awaitListed(t, cs, changed, "a row written after the server's timeouts", func(tools []*sdk.Tool) bool { return slices.Equal(toolNames(tools), []string{"LATE"}) })
}
