package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A Go bus client's tracestate (wire.WithTracestate, beside WithTraceparent)
// reaches an http row's upstream with the caller's trace, for a published
// request (Invoke) and for a call (Call) alike.
func TestTraceBusClientTracestateReachesTheUpstream(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", "client")
	}, capdir.WithTracerProvider(tp))
	row, _ := json.Marshal(map[string]any{"key": "PING", "type": "http", "target": "GET " + up.URL + "/ping", "content": "# WHAT: ping"})
	putRows(t, g.n, string(row))
	c1 := g.connect(t, "c1")
	tok := wire.WithToken(busToken(t, g.n, "c1-agent", "PING"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		name string
		send func(...wire.InvokeOption) (wire.Receipt, error)
	}{
		{"invoke", func(o ...wire.InvokeOption) (wire.Receipt, error) {
			return wire.Invoke(ctx, c1.nc, "c1", "PING", "", o...)
		}},
		{"call", func(o ...wire.InvokeOption) (wire.Receipt, error) {
			return wire.Call(ctx, c1.nc, "c1", "PING", "", o...)
		}},
	} {
		before := len(up.Requests())
		rc, err := c.send(tok, wire.WithTraceparent(callerTP), wire.WithTracestate(callerState))
		if err != nil || !rc.OK {
			t.Fatalf("%s: %+v, %v", c.name, rc.ReceiptSummary, err)
		}
		reqs := up.Requests()
		if len(reqs) != before+1 {
			t.Fatalf("%s: the upstream got %d requests, want 1", c.name, len(reqs)-before)
		}
		got := reqs[len(reqs)-1].Header
		if !strings.HasPrefix(got.Get("traceparent"), "00-"+callerTrace+"-") || got.Get("tracestate") != callerState {
			t.Errorf("%s: the upstream got traceparent %q tracestate %q; want the caller's trace and %q",
				c.name, got.Get("traceparent"), got.Get("tracestate"), callerState)
		}
	}
}
