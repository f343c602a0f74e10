// Package logtest opens a real embedded event log for tests.
package logtest

import (
	"context"
	"testing"
	"time"

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

// Recreate deletes stream under l and creates it again, empty, with the same
// configuration, as anyone holding the JetStream API can: the stream keeps its name
// but is another log, whose sequences start again from 1.
func Recreate(t testing.TB, l *eventlog.Log, stream string) {
	t.Helper()
	ctx := context.Background()
	s, err := l.JetStream().Stream(ctx, stream)
	if err != nil {
		t.Fatalf("recreate %s: %v", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("recreate %s: %v", stream, err)
	}
	if err := l.JetStream().DeleteStream(ctx, stream); err != nil {
		t.Fatalf("delete %s: %v", stream, err)
	}
	if _, err := l.JetStream().CreateStream(ctx, info.Config); err != nil {
		t.Fatalf("create %s again: %v", stream, err)
	}
}

// AwaitTrimmed waits until the retention of stream (Config.DataMaxAge) has removed
// every message it held, and returns its state then.
func AwaitTrimmed(t testing.TB, l *eventlog.Log, stream string) eventlog.StreamState {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := l.State(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if st.FirstSeq > st.LastSeq {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("retention did not trim %s: %+v", stream, st)
		}
		time.Sleep(10 * time.Millisecond) // JetStream announces no expiry: poll
	}
}
