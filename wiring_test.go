package capdir_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
)

// A field of a component's config that Start sets itself is refused when it
// holds a value, saying what to do instead, rather than overwritten; nothing
// is created.
func TestStartRefusesWiringInConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := runner.MapEnv(map[string]string{"K": "v"})
	providers, err := agentrunner.ParseProviders([]string{"*=http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := capdir.Config{
		Log:         eventlog.Config{DataDir: dir, Clock: time.Now, Logger: slog.Default()},
		TerminalKey: nodetest.Key,
		HTTPRunner:  httprunner.Config{Env: env, TagSalt: "salt"},
		MCPRunner:   mcprunner.Config{Upstreams: mcprunner.Static{}, Connected: func(string) {}},
	}
	cfg.Agent = agentrunner.Config{Providers: providers, Env: env}
	_, err = capdir.Start(context.Background(), cfg)
	if !errors.Is(err, capdir.ErrWiringInConfig) {
		t.Fatalf("Start: %v; want ErrWiringInConfig", err)
	}
	for _, want := range []string{
		"node: Config.Log.Clock is set by Start; pass capdir.WithClock to Start",
		"node: Config.Log.Logger is set by Start; pass capdir.WithLogger to Start",
		"node: Config.HTTPRunner.Env is set by Start; pass capdir.WithEnv to Start",
		"node: Config.HTTPRunner.TagSalt is set by Start; derived from TerminalKey",
		"node: Config.MCPRunner.Upstreams is set by Start; name upstream MCP servers in Config.MCPUpstreams",
		"node: Config.MCPRunner.Connected is set by Start",
		"node: Config.Agent.Providers is set by Start; give them in Config.AgentProviders",
		"node: Config.Agent.Env is set by Start; pass capdir.WithEnv to Start",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start: %v\nwant it to say %q", err, want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Start created %s before refusing its config", dir)
	}
}
