package dispatcher

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller gets the answer of a lookup that started after it called, and
// concurrent callers share lookups: 64 callers arriving while lookups take a
// while make far fewer lookups than calls.
func TestRevocationFenceSharesOnlyLaterLookups(t *testing.T) {
	var f revocationFence
	var arrived, lookups atomic.Int64
	lookup := func(context.Context) (uint64, error) {
		lookups.Add(1)
		seen := arrived.Load() // everyone who arrived before this lookup started
		time.Sleep(2 * time.Millisecond)
		return uint64(seen), nil
	}
	const callers, rounds = 64, 20
	var wg sync.WaitGroup
	errs := make(chan error, callers*rounds)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				me := arrived.Add(1)
				seq, err := f.last(context.Background(), lookup)
				if err != nil {
					errs <- err
					return
				}
				if int64(seq) < me {
					errs <- errors.New("a caller got the answer of a lookup that started before it called")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := lookups.Load(); n >= callers*rounds/4 {
		t.Fatalf("%d lookups for %d calls: the fence does not share them", n, callers*rounds)
	}
	t.Logf("%d lookups for %d calls", lookups.Load(), callers*rounds)
}

// A caller that gives up while waiting for the next lookup does not strand the
// callers behind it, and its error is its own context's.
func TestRevocationFenceCallerGivingUp(t *testing.T) {
	var f revocationFence
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	var n atomic.Int64
	lookup := func(context.Context) (uint64, error) {
		started <- struct{}{}
		if n.Add(1) == 1 {
			<-release
		}
		return 7, nil
	}
	first := make(chan error, 1)
	go func() { _, err := f.last(context.Background(), lookup); first <- err }()
	<-started // the first lookup runs and blocks

	ctx, cancel := context.WithCancel(context.Background())
	quitter := make(chan error, 1)
	go func() { _, err := f.last(ctx, lookup); quitter <- err }()
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.next != nil })
	later := make(chan uint64, 1)
	go func() { seq, _ := f.last(context.Background(), lookup); later <- seq }()
	cancel()
	if err := <-quitter; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case seq := <-later:
		if seq != 7 {
			t.Fatalf("later caller got %d", seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a caller behind one that gave up never got an answer")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
