// Package logtest opens a real embedded event log for tests.
package logtest

import (
	"context"
	"testing"

	"github.com/capdir/capdir/eventlog"
)

// Open starts an embedded log in dir (t.TempDir() when dir is "") and closes it at cleanup.
func Open(t testing.TB, dir string) *eventlog.Log {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
