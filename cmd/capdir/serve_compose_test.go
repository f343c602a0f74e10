package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
)

// --agent-provider is repeatable and comma-separated and wins over
// $CAPDIR_AGENT_PROVIDERS; the bounds default to the runners' own.
func TestServeComposeFlags(t *testing.T) {
	env := func(v string, ok bool) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name != "CAPDIR_AGENT_PROVIDERS" {
				t.Fatalf("looked up %s", name)
			}
			return v, ok
		}
	}
	for _, tt := range []struct {
		args []string
		env  func(string) (string, bool)
		want []string
	}{
		{nil, env("", false), []string{}},
		{nil, env("gw:=https://gw.example/v1,*=http://127.0.0.1:9/v1", true), []string{"gw:=https://gw.example/v1,*=http://127.0.0.1:9/v1"}},
		{[]string{"--agent-provider", "gpt-=https://api.example/v1", "--agent-provider", "*=http://127.0.0.1:9"}, env("x", true),
			[]string{"gpt-=https://api.example/v1", "*=http://127.0.0.1:9"}},
	} {
		cmd := serveCmd()
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		flag, _ := cmd.Flags().GetStringArray("agent-provider")
		if got := agentProviders(cmd.Flags().Changed("agent-provider"), flag, tt.env); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: providers %q, want %q", tt.args, got, tt.want)
		}
	}
	cmd := serveCmd()
	for flag, want := range map[string]int{"agent-step-limit": agentrunner.DefaultMaxSteps, "flow-max-depth": dispatcher.DefaultMaxDepth, "flow-max-fanout": flowrunner.DefaultMaxFanout} {
		if got, err := cmd.Flags().GetInt(flag); err != nil || got != want {
			t.Errorf("--%s defaults to %d (%v), want %d", flag, got, err, want)
		}
	}
}

// A malformed provider, price or bound is refused before anything is created,
// naming the flag.
func TestServeRefusesBadComposeFlags(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	t.Setenv("CAPDIR_AGENT_PROVIDERS", "")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--agent-provider", "gpt-=ftp://api.example"}, "--agent-provider"},
		{[]string{"--agent-price", "gpt-4.1=cheap"}, "--agent-price"},
		{[]string{"--flow-max-depth", "-1"}, "--flow-max-depth"},
		{[]string{"--flow-max-fanout", "-2"}, "--flow-max-fanout"},
		{[]string{"--agent-step-limit", "-3"}, "--agent-step-limit"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--data", dir, "--http", "127.0.0.1:0", "--log-level", "error"}, tc.args...)
		_, _, err := runCLI(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: %v; want an error naming %s", tc.args, err, tc.flag)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: serve created %s before failing", tc.args, dir)
		}
	}
}
