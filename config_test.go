package capdir_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
)

// Each component checks its own settings, and Start reports every problem at
// once, naming the serve flag where there is one, before it creates anything.
func TestStartChecksEveryComponentsSettingsFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := capdir.Config{
		Log:         eventlog.Config{DataDir: dir},
		TerminalKey: nodetest.Key,
		Projector:   projector.Settings{Linger: 2 * time.Second},
		Dispatch:    dispatcher.Settings{MaxDepth: -1, AckWait: -time.Second},
		API:         api.Settings{MaxImports: -1},
		HTTPRunner:  httprunner.Config{Limits: runner.Limits{Timeout: -time.Second}},
		ComposeConfig: capdir.ComposeConfig{
			Agent: agentrunner.Config{MaxSteps: -3},
			Flow:  flowrunner.Config{MaxFanout: -2, Limits: runner.Limits{MaxResultBytes: -1}},
		},
	}
	_, err := capdir.Start(context.Background(), cfg)
	for _, want := range []string{"--projection-linger", "--flow-max-depth", "--ack-wait", "--max-imports", "--agent-step-limit",
		"--flow-max-fanout", "flowrunner: Config.MaxResultBytes must not be negative", "--http-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Start: %v; want it to name %s", err, want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Start created %s before refusing its config", dir)
	}
	if err := (&capdir.Config{Log: eventlog.Config{DataDir: dir}}).Validate(); err != nil {
		t.Errorf("a zero config with a data dir: %v", err)
	}
}

// A short owner key is refused before the data dir is made, saying where the key
// comes from.
func TestStartRefusesAShortOwnerKeyFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	_, err := capdir.Start(context.Background(), capdir.Config{Log: eventlog.Config{DataDir: dir}, TerminalKey: "short"})
	if err == nil || !strings.Contains(err.Error(), "CAPDIR_TERMINAL_KEY") {
		t.Errorf("Start with a 5-character key: %v; want a refusal naming CAPDIR_TERMINAL_KEY", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Start created %s before refusing the key", dir)
	}
}
