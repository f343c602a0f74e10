package capdir

import (
	"context"
	"sync"
	"testing"
	"time"
)

// An upstream asked to sync again and again while its sync runs (a stream of
// list_changed) is synced once more after it, not once an ask, and no sooner
// than the gap after the one before started; another upstream is not held back.
func TestSyncQueueSpacesAnUpstreamsSyncs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	starts := map[string][]time.Time{}
	release := make(chan struct{})
	q := newSyncQueue(ctx, func(_ context.Context, up string) {
		mu.Lock()
		starts[up] = append(starts[up], time.Now())
		first := len(starts[up]) == 1
		mu.Unlock()
		if up == "churn" && first {
			<-release // the asks below come while the first sync runs
		}
	})
	const gap = 300 * time.Millisecond
	q.gap = gap
	q.start("churn")
	for range 50 {
		q.start("churn")
	}
	q.start("quiet")
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n, quiet := len(starts["churn"]), len(starts["quiet"])
		mu.Unlock()
		if n >= 2 && quiet == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d syncs of churn, %d of quiet; want 2 and 1", n, quiet)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * gap) // nothing more is asked: no third sync comes
	cancel()
	q.wait()
	mu.Lock()
	defer mu.Unlock()
	if got := starts["churn"]; len(got) != 2 || got[1].Sub(got[0]) < gap {
		t.Fatalf("churn synced at %v; want twice, %v apart at least", got, gap)
	}
	if len(starts["quiet"]) != 1 {
		t.Fatalf("quiet synced %d times", len(starts["quiet"]))
	}
}
