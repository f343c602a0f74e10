package capdir_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
)

// Two nodes on one data dir would fold one log into one bbolt file twice: the
// second is refused at once, naming the first's pid. flock is per open file, so
// two nodes of this one test process conflict as two processes would.
func TestOneNodePerDataDir(t *testing.T) {
	first := nodetest.Start(t, nil)
	dir := first.Config().Log.DataDir
	if b, err := os.ReadFile(capdir.LockPath(dir)); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("lock file = %q, %v; want this process's pid", b, err)
	}
	cfg := capdir.Config{
		TerminalKey: nodetest.Key,
		Log:         eventlog.Config{DataDir: dir},
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	want := fmt.Sprintf("data dir %s is in use by capdir (pid %d)", dir, os.Getpid())
	second, err := capdir.Start(ctx, cfg, nodetest.Quiet())
	if err == nil {
		second.Stop(ctx)
		t.Fatal("a second node started on a data dir a running node holds")
	}
	if err.Error() != want || !errors.Is(err, capdir.ErrDataDirInUse) {
		t.Fatalf("second node: %v; want %q", err, want)
	}
	if code, body := nodetest.Do(t, first, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`); code != 201 {
		t.Fatalf("the first node after the refusal: %d %s", code, body)
	}

	// Stop releases the dir.
	nodetest.CheckReplay(t, first)
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A start that fails after taking the lock releases it too.
	bad := cfg
	bad.HTTP.Addr = "127.0.0.1:99999"
	if n, err := capdir.Start(ctx, bad); err == nil {
		n.Stop(ctx)
		t.Fatal("a node started with HTTP port 99999")
	}
	third := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	if code, body := nodetest.Do(t, third, "GET", "/api/directory/A", ""); code != 200 {
		t.Fatalf("the restarted node: %d %s", code, body)
	}
}

// A data dir that already exists with access for group or others is used as it
// is, and the node says so at start with the chmod to run; an owner-only dir, or
// one the node makes, gets no warning.
func TestDataDirOpenToOthersWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not say who may read a dir here")
	}
	for _, tc := range []struct {
		name string
		mode os.FileMode // 0: a dir the node makes itself
		warn bool
	}{
		{"group and others", 0o755, true},
		{"group read", 0o740, true},
		{"owner only", 0o700, false},
		{"made by the node", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if tc.mode != 0 {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			var logs nodetest.Buffer
			nodetest.Start(t, func(c *capdir.Config) {
				c.Log.DataDir = dir
			}, capdir.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			want := fmt.Sprintf("node: data dir %s has mode %04o; it holds the log, the projection and the signing key, and should be accessible to its owner only: chmod 700 %s",
				dir, tc.mode, dir)
			got := string(logs.Bytes())
			if warned := strings.Contains(got, "level=WARN msg="+strconv.Quote(want)); warned != tc.warn {
				t.Fatalf("warned = %v, want %v; log:\n%s", warned, tc.warn, got)
			}
			if !tc.warn && strings.Contains(got, "chmod 700") {
				t.Fatalf("a warning for an owner-only dir:\n%s", got)
			}
		})
	}
}
