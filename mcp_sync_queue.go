package capdir

import (
	"context"
	"sync"
	"time"
)

// mcpSyncConcurrency bounds how many upstreams' tool lists are synced at once:
// a slow or hung upstream holds one slot, never the others' syncs.
const mcpSyncConcurrency = 4

// mcpSyncTimeout bounds one upstream's sync, its listing and the import of its
// rows together; the listing alone is bounded by the mcp runner's timeout too.
const mcpSyncTimeout = 2 * time.Minute

// mcpSyncGap is the least time from the start of one upstream's sync to the
// start of the next: an upstream that sends notifications/tools/list_changed
// without end (a tool dropped and listed again, over and over) is synced at
// most once a gap, so what it can append to the directory's log, which is kept
// forever, grows at that pace at most.
const mcpSyncGap = 2 * time.Second

// syncQueue runs upstream syncs concurrently, at most mcpSyncConcurrency at
// once and one at a time per upstream: a sync asked for while that upstream's
// is running runs once more after it (asks meanwhile coalesce), no sooner than
// gap after the start of the one before. Every sync is its own goroutine,
// owned by the queue: wait returns once all have ended, which they do when ctx
// ends.
type syncQueue struct {
	ctx  context.Context
	sync func(ctx context.Context, upstream string)
	slot chan struct{}
	gap  time.Duration
	wg   sync.WaitGroup

	mu      sync.Mutex
	running map[string]bool // upstreams with a sync running or waiting for a slot
	again   map[string]bool // upstreams asked for again while running
}

func newSyncQueue(ctx context.Context, sync func(context.Context, string)) *syncQueue {
	return &syncQueue{ctx: ctx, sync: sync, slot: make(chan struct{}, mcpSyncConcurrency), gap: mcpSyncGap,
		running: map[string]bool{}, again: map[string]bool{}}
}

// start asks for upstream's sync; it never blocks.
func (q *syncQueue) start(upstream string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running[upstream] {
		q.again[upstream] = true
		return
	}
	q.running[upstream] = true
	q.wg.Add(1)
	go q.run(upstream)
}

// run syncs upstream in a slot, again while it was asked for meanwhile, each
// no sooner than gap after the one before started.
func (q *syncQueue) run(upstream string) {
	defer q.wg.Done()
	for {
		started := time.Now()
		if !q.once(upstream) {
			return
		}
		if wait := q.gap - time.Since(started); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-q.ctx.Done():
				t.Stop()
			}
		}
	}
}

// once syncs upstream once; it reports whether to sync it again.
func (q *syncQueue) once(upstream string) bool {
	select {
	case q.slot <- struct{}{}:
		ctx, cancel := context.WithTimeout(q.ctx, mcpSyncTimeout)
		q.sync(ctx, upstream)
		cancel()
		<-q.slot
	case <-q.ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.again[upstream] && q.ctx.Err() == nil {
		delete(q.again, upstream)
		return true
	}
	delete(q.again, upstream)
	delete(q.running, upstream)
	return false
}

// wait returns once every sync started has ended.
func (q *syncQueue) wait() { q.wg.Wait() }
