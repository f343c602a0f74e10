package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
)

// A taken HTTP port is refused before the data dir or a key is created, and the
// error names the flag to change.
func TestServeRefusesATakenPortBeforeCreatingAnything(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	dir := filepath.Join(t.TempDir(), "data")
	_, _, err = runCLI(t, "", "serve", "--data", dir, "--http", addr, "--log-level", "error")
	if err == nil || !strings.HasPrefix(err.Error(), "--http "+addr+": ") || !strings.Contains(err.Error(), "--http HOST:PORT") {
		t.Fatalf("serve on a taken port: %v; want an error naming --http", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("serve created %s before failing: %v", dir, err)
	}
}

// A taken NATS client port is refused as a taken HTTP port is: at once, naming the
// flag, before the data dir is created (the embedded server would only fail its
// readiness wait).
func TestServeRefusesATakenNATSPortBeforeCreatingAnything(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	dir := filepath.Join(t.TempDir(), "data")
	_, _, err = runCLI(t, "", "serve", "--data", dir, "--http", "127.0.0.1:0", "--nats-listen", addr, "--log-level", "error")
	if err == nil || !strings.HasPrefix(err.Error(), "--nats-listen "+addr+": ") || !strings.Contains(err.Error(), "--nats-listen HOST:PORT") {
		t.Fatalf("serve on a taken NATS port: %v; want an error naming --nats-listen", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("serve created %s before failing: %v", dir, err)
	}
}

// A listener given as a bare port is refused with the host:port to give instead.
func TestServeListenerWithoutHost(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	dir := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct{ flag, value, want string }{
		{"--http", "18082", "--http 18082: --http wants host:port, e.g. 127.0.0.1:18082"},
		{"--nats-listen", "4222", "--nats-listen 4222: --nats-listen wants host:port, e.g. 127.0.0.1:4222"},
		{"--http", "localhost", "--http localhost: --http wants host:port, e.g. 127.0.0.1:8080"},
	} {
		args := []string{"serve", "--data", dir, "--http", "127.0.0.1:0", "--log-level", "error", tc.flag, tc.value}
		if _, _, err := runCLI(t, "", args...); err == nil || err.Error() != tc.want {
			t.Errorf("serve %s %s: %v; want %q", tc.flag, tc.value, err, tc.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("serve created %s before failing: %v", dir, err)
	}
}

// A second server on a data dir is refused at once, before it writes anything
// there (not even a generated key).
func TestServeRefusesADataDirInUse(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	_, _, err := runCLI(t, "", "serve", "--data", dir, "--http", "127.0.0.1:0", "--log-level", "error")
	if want := fmt.Sprintf("data dir %s is in use by capdir (pid %d)", dir, os.Getpid()); err == nil || err.Error() != want {
		t.Fatalf("second serve: %v; want %q", err, want)
	}
	if _, err := os.Stat(capdir.KeyPath(dir)); !os.IsNotExist(err) {
		t.Fatalf("the refused serve wrote a key into the dir in use: %v", err)
	}
}

func TestServeHelpNamesItsEnvironment(t *testing.T) {
	out, _, err := runCLI(t, "", "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"CAPDIR_DATA", "CAPDIR_TERMINAL_KEY", "CAPDIR_SECRET_ENV", "CAPDIR_AGENT_PROVIDERS"} {
		if !strings.Contains(out, "\n  "+env+" ") {
			t.Errorf("serve --help does not mention %s:\n%s", env, out)
		}
	}
}

// --secret-env is repeatable and comma-separated, wins over $CAPDIR_SECRET_ENV, and
// an empty value of either allows none; with neither, the default list applies.
func TestServeSecretEnv(t *testing.T) {
	envWith := func(v string, ok bool) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name != "CAPDIR_SECRET_ENV" {
				t.Fatalf("looked up %s", name)
			}
			return v, ok
		}
	}
	tests := []struct {
		args    []string
		env     func(string) (string, bool)
		want    []string
		allowed string
		refused string
	}{
		{nil, envWith("", false), runner.DefaultSecretEnv, "DEMO_API_KEY", "DB_PASSWORD"},
		{nil, envWith("DB_PASSWORD,ACME_*", true), []string{"DB_PASSWORD,ACME_*"}, "ACME_X", "DEMO_API_KEY"},
		{nil, envWith("", true), []string{""}, "", "DEMO_API_KEY"},
		{[]string{"--secret-env", "A_KEY,B_*", "--secret-env", "C"}, envWith("*", true), []string{"A_KEY", "B_*", "C"}, "B_X", "DEMO_API_KEY"},
		{[]string{"--secret-env="}, envWith("*", true), []string{}, "", "DEMO_API_KEY"},
		{[]string{"--secret-env", "*"}, envWith("", false), []string{"*"}, "DB_PASSWORD", "CAPDIR_TERMINAL_KEY"},
	}
	for _, tt := range tests {
		cmd := serveCmd()
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		flag, _ := cmd.Flags().GetStringSlice("secret-env")
		got := secretEnvPatterns(cmd.Flags().Changed("secret-env"), flag, tt.env)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: patterns %q, want %q", tt.args, got, tt.want)
		}
		list, err := runner.ParseSecretEnv(got...)
		if err != nil {
			t.Fatal(err)
		}
		if tt.allowed != "" && !list.Allows(tt.allowed) || list.Allows(tt.refused) {
			t.Errorf("%v: %s allows %s=%v %s=%v", tt.args, list, tt.allowed, list.Allows(tt.allowed), tt.refused, list.Allows(tt.refused))
		}
	}
}

// capdir serve on a data dir whose control stream was deleted refuses to serve and
// exits non-zero saying why and what to do; capdir replay recovers.
func TestServeRefusesABehindLogAndReplayRecovers(t *testing.T) {
	defer slog.SetDefault(slog.Default()) // serve installs its own
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	n := nodetest.Start(t, nil)
	for _, k := range []string{"A", "B"} {
		row := `{"key":"` + k + `","type":"fn","target":"echo","content":"# WHAT: ` + k + `"}`
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
	}
	cfg := n.Config()
	catchUp, cancelCatchUp := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelCatchUp()
	if err := nodetest.CatchUp(catchUp, n); err != nil { // the node key's announcement is folded too
		t.Fatal(err)
	}
	applied := nodetest.ControlSeq(t, n) // the rows and the node key's announcement
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	l := logtest.Open(t, cfg.Log.DataDir)
	if err := l.JetStream().DeleteStream(context.Background(), wire.ControlStream); err != nil {
		t.Fatal(err)
	}
	l.Close()

	_, _, err := runCLI(t, "", "serve", "--data", cfg.Log.DataDir, "--http", "127.0.0.1:0", "--log-level", "error")
	if !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("serve on a deleted control stream: %v; want ErrLogBehind", err)
	}
	for _, want := range []string{wire.ControlStream, "ends at sequence 0", fmt.Sprintf("up to sequence %d", applied), "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}

	run(t, "replay", "--data", cfg.Log.DataDir)
	n = nodetest.Start(t, func(c *capdir.Config) { *c = cfg })
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: A"}`); code != 201 {
		t.Fatalf("POST after the replay: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/A", ""); code != 200 {
		t.Fatalf("GET after the replay: %d %s", code, body)
	}
}

// A component failing under a serving node (here the projector, its control stream
// deleted and created again) ends capdir serve with that error, so it exits
// non-zero, instead of a clean stop.
func TestServeReturnsTheFailureOfARunningNode(t *testing.T) {
	n := nodetest.Start(t, nil)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: A"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	logtest.Recreate(t, n.Log(), wire.ControlStream)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure never seen fails here, not at the package's timeout
	defer cancel()
	err := serveUntil(ctx, n, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, projector.ErrLogBehind) {
		t.Fatalf("serve ended with %v; want the projector's ErrLogBehind", err)
	}
}

// serve documents its drain and refuses a negative --shutdown-timeout before
// anything starts.
func TestServeShutdownTimeoutFlag(t *testing.T) {
	help := run(t, "serve", "--help")
	if !strings.Contains(help, "--shutdown-timeout") || !strings.Contains(help, "calls in flight") || !strings.Contains(help, "(default 30s)") {
		t.Fatalf("serve --help does not document --shutdown-timeout:\n%s", help)
	}
	dir := t.TempDir()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"serve", "--data", dir, "--http", "127.0.0.1:0", "--shutdown-timeout", "-1s"})
	err := executeBounded(cmd)
	if err == nil || !strings.Contains(err.Error(), "--shutdown-timeout -1s") {
		t.Fatalf("serve --shutdown-timeout -1s: %v", err)
	}
}

// --console: absent, the node decides (loopback only); given, it is on or off.
func TestServeConsoleFlag(t *testing.T) {
	help := run(t, "serve", "--help")
	if !strings.Contains(help, "--console") || !strings.Contains(help, "loopback") {
		t.Fatalf("serve --help does not document --console:\n%s", help)
	}
	for _, line := range strings.Split(help, "\n") {
		if strings.Contains(line, "--console ") && strings.Contains(line, "(default true)") {
			t.Errorf("serve --help gives --console two defaults: %s", line)
		}
	}
	for args, want := range map[string]string{"--console": "true", "--console=false": "false", "--console=true": "true"} {
		cmd := serveCmd()
		if err := cmd.ParseFlags([]string{args}); err != nil {
			t.Fatalf("serve %s: %v", args, err)
		}
		if f := cmd.Flags().Lookup("console"); !f.Changed || f.Value.String() != want {
			t.Errorf("serve %s: console changed %v, value %s; want changed, %s", args, f.Changed, f.Value, want)
		}
	}
	for _, tc := range []struct {
		given, on bool
		want      capdir.ConsoleMode
	}{{false, true, capdir.ConsoleAuto}, {true, true, capdir.ConsoleOn}, {true, false, capdir.ConsoleOff}} {
		if got := consoleMode(tc.given, tc.on); got != tc.want {
			t.Errorf("consoleMode(given %v, on %v) = %v, want %v", tc.given, tc.on, got, tc.want)
		}
	}
}
