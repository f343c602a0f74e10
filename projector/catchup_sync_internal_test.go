package projector

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A rebuild writes its file out while it folds: a commit starts an fsync unless
// one still runs, never two at once; the first fsync's error is kept for the
// rebuild to return, and no fsync starts after it.
func TestSyncBehindRunsOneFsyncAtATimeAndKeepsItsError(t *testing.T) {
	var s syncBehind
	if err := s.wait(); err != nil {
		t.Fatalf("wait with no fsync started: %v", err)
	}
	var started, running, most atomic.Int32
	release := make(chan error)
	sync := func() error {
		started.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return <-release
	}
	s.kick(sync)
	for started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.kick(sync) // the first still runs: no second
	s.kick(sync)
	release <- nil
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	if got := started.Load(); got != 1 {
		t.Fatalf("%d fsyncs started while one ran, want 1", got)
	}
	s.kick(sync) // the first has ended: a new one
	release <- errors.New("input/output error")
	for s.done != nil {
		select {
		case <-s.done:
			s.kick(sync) // the second failed: no third
			if s.done != nil {
				t.Fatal("an fsync started after one failed")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the second fsync did not end")
		}
	}
	if got := started.Load(); got != 2 {
		t.Fatalf("%d fsyncs started, want 2", got)
	}
	if got := most.Load(); got != 1 {
		t.Fatalf("%d fsyncs ran at once", got)
	}
	err := s.wait()
	if err == nil || !strings.Contains(err.Error(), "write the rebuilt file out: input/output error") {
		t.Fatalf("wait after a failed fsync: %v", err)
	}
}
