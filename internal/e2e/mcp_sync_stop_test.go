package e2e_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// holdToolsList serves next, except that a tools/list is held until its client
// gives up on it (or release is closed, so that a test's Close never waits on
// it); arrived is closed when the first one comes.
func holdToolsList(next http.Handler, arrived, release chan struct{}) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			once.Do(func() { close(arrived) })
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Stop ends the upstream sync before it closes the mcp runner: a sync in flight
// (a tools/list its upstream holds, with a second upstream still to list) ends
// because its context was cancelled, and neither it nor the next upstream's
// sync meets a stopped runner.
func TestStopEndsTheMCPSyncBeforeTheRunner(t *testing.T) {
	srv, _ := mcptest.Server(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	held := httptest.NewServer(holdToolsList(mcptest.Handler(srv), arrived, release))
	t.Cleanup(held.Close)
	t.Cleanup(func() { close(release) })
	_, next := mcptest.Server(t)
	logs := &nodetest.Buffer{}
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPRelist = -1
		c.MCPUpstreams = mcprunner.Static{
			"a_held": {Name: "a_held", URL: held.URL},
			"b_next": {Name: "b_next", URL: next.URL},
		}
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the node's sync never listed the held upstream's tools")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "tools not listed") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no sync ended while the node stopped; the log:\n%s", logs)
	}
	for _, l := range lines {
		if !strings.Contains(l, "ERR:mcp:canceled:") || strings.Contains(l, "runner stopped") {
			t.Errorf("a sync in flight at Stop ended otherwise than by its context: %s", l)
		}
	}
}
