package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
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

// A second server on a data dir is refused at once, before it writes anything
// there (not even a generated key).
func TestServeRefusesADataDirInUse(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	n := nodetest.Start(t, nil)
	dir := n.Config.DataDir
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
	for _, env := range []string{"CAPDIR_DATA", "CAPDIR_TERMINAL_KEY"} {
		if !strings.Contains(out, env) {
			t.Errorf("serve --help does not mention %s:\n%s", env, out)
		}
	}
}
