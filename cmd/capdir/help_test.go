package main

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/bench"
	"github.com/spf13/pflag"
)

// --version prints the module version, with the VCS revision a build in a clone
// records.
func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "", "--version")
	if err != nil || out != "capdir "+version()+"\n" {
		t.Fatalf("--version: %v %q", err, out)
	}
	for _, tc := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "5b3588f0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}}, "(devel) (revision 5b3588f01234)"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}, "(devel) (revision abc-dirty)"},
	} {
		if got := versionOf(&tc.info); got != tc.want {
			t.Errorf("versionOf(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

// An unknown flag is answered with the command's nearest flag, when one is near.
func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--nats-lisen", "127.0.0.1:4222"}, "unknown flag: --nats-lisen; did you mean --nats-listen? (capdir serve --help lists its flags)"},
		{[]string{"invoke", "--jsn", "GREET"}, "unknown flag: --jsn; did you mean --json? (capdir invoke --help lists its flags)"},
		{[]string{"token", "mint", "--tll", "10m"}, "unknown flag: --tll; did you mean --ttl? (capdir token mint --help lists its flags)"},
		{[]string{"invoke", "--colour", "GREET"}, "unknown flag: --colour (capdir invoke --help lists its flags)"},
	} {
		if _, _, err := runCLI(t, "", tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
}

// invoke without a key (or with too many arguments) says what it takes.
func TestInvokeSaysWhatItTakes(t *testing.T) {
	for _, args := range [][]string{{"invoke"}, {"invoke", "A", "b", "c"}} {
		_, _, err := runCLI(t, "", args...)
		if err == nil || !strings.HasPrefix(err.Error(), "invoke takes the KEY of a row, then optionally its BODY of arguments separated by | (capdir invoke GREET Ada)") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// serve --help lists every flag under one heading, in the groups' order.
func TestServeHelpGroupsItsFlags(t *testing.T) {
	out, _, err := runCLI(t, "", "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	cmd := serveCmd()
	var listed []string
	for _, g := range serveFlagGroups {
		at := strings.Index(out, "\n"+g.title+":\n")
		if at < 0 {
			t.Errorf("serve --help has no heading %q:\n%s", g.title, out)
			continue
		}
		for _, name := range g.flags {
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("group %q names --%s, which serve does not have", g.title, name)
			}
			if slices.Contains(listed, name) {
				t.Errorf("--%s is in two groups", name)
			}
			listed = append(listed, name)
			section, _, _ := strings.Cut(out[at+1:], "\n\n")
			if !strings.Contains(section, "--"+name+" ") {
				t.Errorf("--%s is not listed under %q", name, g.title)
			}
		}
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(listed, f.Name) {
			t.Errorf("--%s is in no group of serve --help", f.Name)
		}
	})
}

// bench --help lists every scenario bench runs.
func TestBenchHelpListsEveryScenario(t *testing.T) {
	out, _, err := runCLI(t, "", "bench", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bench.Scenarios {
		if !strings.Contains(out, "\n  "+s+" ") {
			t.Errorf("bench --help does not list the scenario %s:\n%s", s, out)
		}
	}
}

// serve's log writes durations as text.
func TestServeLogWritesDurationsAsText(t *testing.T) {
	var buf bytes.Buffer
	logger, err := newLogger("info", &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("shutting down", "timeout", 1500*time.Millisecond, "nested", map[string]any{"n": 1})
	logger.WithGroup("g").Info("x", "wait", 30*time.Second)
	var first, second map[string]any
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[1]), &second) != nil {
		t.Fatalf("log: %s", buf.String())
	}
	if first["timeout"] != "1.5s" || second["g"].(map[string]any)["wait"] != "30s" {
		t.Fatalf("durations logged as %v and %v; want 1.5s and 30s", first["timeout"], second["g"])
	}
}
