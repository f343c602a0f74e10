package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
)

// An invocation id handed to a caller is in the log. With the log's only server
// gone (node A, whose embedded server node B's log is on, stopped), a dispatch to
// B appends a request that is never acknowledged; once B's dispatch wait ends, B
// answers that the request is not in the log (503 with Retry-After, no invocation id), not 202
// with an id no log holds.
func TestDispatchWithoutAnAcknowledgedRequestHandsOutNoID(t *testing.T) {
	var bCreds string
	a := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = freePort(t)
		c.Name = "node-a"
		bCreds = addBusIdentity(t, c.Log.DataDir, "node-b", eventlog.RoleNode)
	})
	b := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.NATSURL = a.Log().ClientURL()
		c.Log.Creds = bCreds
		c.Log.AckTimeout = 300 * time.Millisecond
		c.API.DispatchWait = time.Second
		c.Name = "node-b"
	})
	tokRow(t, a, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	if err := nodetest.CatchUp(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	code, body := nodetest.Do(t, b, "POST", "/api/dispatch", `{"key":"SAY","body":"lost with the server"}`)
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	b.Stop(sctx) // the log is gone: what B could not append is cut off
	if code == 202 || code == 200 || strings.Contains(body, "invocation_id") {
		t.Fatalf("dispatch with no server for its request: %d %s; want no invocation id", code, body)
	}
	if code != 503 || !strings.Contains(body, "the request is not in the log") {
		t.Fatalf("dispatch with no server for its request: %d %s; want 503 saying the request is not in the log", code, body)
	}
}
