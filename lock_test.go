package capdir_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
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
	dir := first.Config.Log.DataDir
	if b, err := os.ReadFile(capdir.LockPath(dir)); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("lock file = %q, %v; want this process's pid", b, err)
	}
	cfg := capdir.Config{
		TerminalKey: nodetest.Key,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Log:         eventlog.Config{DataDir: dir},
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	want := fmt.Sprintf("data dir %s is in use by capdir (pid %d)", dir, os.Getpid())
	second, err := capdir.Start(ctx, cfg)
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
