package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/internal/nodetest"
)

// The health page counts the workers running a call now.
func TestConsoleHealthCountsBusyWorkers(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	reg := fnrunner.NewRegistry()
	reg.Register("block", func(ctx context.Context, _ []any) (string, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "done", nil
	})
	n := nodetest.Start(t, func(c *capdir.Config) { c.Fn.Registry, c.Dispatch.Workers = reg, 3 })
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"SLOW","type":"fn","target":"block","content":"# WHAT: waits"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newClient(t, n.URL())
	c.signIn()
	busy := regexp.MustCompile(`<span id="workers">(\d+) of (\d+) workers busy</span>`)
	_, body := c.do("GET", "/console/health", nil, nil)
	if m := busy.FindStringSubmatch(body); m == nil || m[1] != "0" || m[2] != "3" {
		t.Fatalf("idle: %v in %s, want 0 of 3", m, body)
	}
	done := make(chan int, 1)
	go func() { // not the test's goroutine: it reports, the test fails
		req, _ := http.NewRequest("POST", n.URL()+"/api/dispatch", strings.NewReader(`{"key":"SLOW","body":"x"}`))
		req.Header.Set("x-terminal-key", nodetest.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-started
	_, body = c.do("GET", "/console/health", nil, nil)
	close(release)
	if code := <-done; code != 200 {
		t.Errorf("the slow call: %d", code)
	}
	if m := busy.FindStringSubmatch(body); m == nil || m[1] != "1" {
		t.Fatalf("one call running: %v, want 1 of 3", m)
	}
}
