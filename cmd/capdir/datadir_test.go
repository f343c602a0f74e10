package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// replay, digest and compact refuse a data dir a running node holds, at once,
// and touch nothing in it: replay used to swap the bbolt file under the live
// server.
func TestReplayAndDigestRefuseADataDirInUse(t *testing.T) {
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	before, err := os.Stat(capdir.ProjectionPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("data dir %s is in use by capdir (pid %d)", dir, os.Getpid())
	for _, args := range [][]string{{"replay", "--data", dir}, {"digest", "--data", dir}, {"compact", "--data", dir}} {
		start := time.Now()
		stdout, _, err := runCLI(t, "", args...)
		if err == nil || err.Error() != want || !errors.Is(err, capdir.ErrDataDirInUse) {
			t.Fatalf("capdir %s while a node runs: %v (output %q); want %q", strings.Join(args, " "), err, stdout, want)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("capdir %s took %s to refuse", args[0], el)
		}
	}
	after, err := os.Stat(capdir.ProjectionPath(dir))
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the live projection file was replaced: %v", err)
	}
	for _, tmp := range []string{".rebuild", ".compact"} {
		if _, err := os.Stat(capdir.ProjectionPath(dir) + tmp); !os.IsNotExist(err) {
			t.Fatalf("a refused command left %s behind: %v", tmp, err)
		}
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/A", ""); code != 200 {
		t.Fatalf("the node after the refusals: %d %s", code, body)
	}

	// Once the node stops, both work.
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	d := strings.TrimSpace(run(t, "digest", "--data", dir))
	run(t, "replay", "--data", dir)
	if again := strings.TrimSpace(run(t, "digest", "--data", dir)); again != d || len(d) != 64 {
		t.Fatalf("digest %q, after replay %q", d, again)
	}
}

// replay and digest on a dir without a log say so, name the dir, fail, and create
// nothing (they used to create an empty log and print "replayed 0 events").
func TestReplayAndDigestWithoutALog(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	empty := t.TempDir()
	for _, dir := range []string{missing, empty} {
		for _, cmd := range []string{"replay", "digest", "compact"} {
			stdout, _, err := runCLI(t, "", cmd, "--data", dir)
			if err == nil || !errors.Is(err, capdir.ErrNoLog) || !strings.HasPrefix(err.Error(), "no capdir log in "+dir+":") {
				t.Errorf("capdir %s --data %s: %v (output %q); want an error starting %q", cmd, dir, err, stdout, "no capdir log in "+dir+":")
			}
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("%s was created: %v", missing, err)
	}
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
		t.Errorf("%s now holds %v (%v)", empty, ents, err)
	}

	// A log without a projection: digest says replay rebuilds it.
	n := nodetest.Start(t, nil)
	dir := n.Config().Log.DataDir
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(capdir.ProjectionPath(dir)); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"digest", "compact"} {
		_, _, err := runCLI(t, "", cmd, "--data", dir)
		if want := fmt.Sprintf("no projection in %s (no %s): capdir replay --data %s rebuilds it from the log", dir, capdir.ProjectionPath(dir), dir); err == nil || err.Error() != want {
			t.Fatalf("%s without a projection: %v; want %q", cmd, err, want)
		}
	}
}

// What capdir prints for a data dir in use says how to free it.
func TestDataDirInUseSaysHowToFix(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&capdir.DataDirInUseError{Dir: "capdir-data", PID: 42},
			"data dir capdir-data is in use by capdir (pid 42); stop that capdir first (Ctrl-C where it runs, or kill -INT 42), or give this command another --data"},
		{fmt.Errorf("replay: %w", &capdir.DataDirInUseError{Dir: "d"}),
			"replay: data dir d is in use by capdir (pid unknown); stop that capdir first (Ctrl-C where it runs), or give this command another --data"},
		{errors.New("other"), "other"},
	} {
		if got := withHowToFix(tc.err); got != tc.want {
			t.Errorf("withHowToFix(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
