package httprunner

import (
	"context"
	"sync"
	"time"
)

// DefaultOriginWait is Config.OriginWait's default.
const DefaultOriginWait = 250 * time.Millisecond

// origins counts the calls in flight to each origin, so that one origin that
// hangs cannot hold every worker of the node. A call that finds its origin's
// bound reached waits for a slot a short while (a burst to a healthy origin frees
// slots within it) and is then refused (ERR:http:origin_busy), nothing sent.
type origins struct {
	max      int           // calls in flight per origin; no bound when 0
	wait     time.Duration // how long a call over the bound waits for a slot
	mu       sync.Mutex
	inFlight map[string]*originSlots // no entry at 0 calls in flight
}

type originSlots struct {
	n     int           // calls in flight
	freed chan struct{} // closed (and replaced) when one of them ends
}

// acquire takes a slot for name, waiting up to o.wait for one; it reports false
// when none came free in time or ctx ended. Each true must be followed by one
// release.
func (o *origins) acquire(ctx context.Context, name string) bool {
	if o.max <= 0 {
		return true
	}
	var timeout <-chan time.Time
	for {
		o.mu.Lock()
		st := o.inFlight[name]
		if st == nil {
			if o.inFlight == nil {
				o.inFlight = map[string]*originSlots{}
			}
			st = &originSlots{freed: make(chan struct{})}
			o.inFlight[name] = st
		}
		if st.n < o.max {
			st.n++
			o.mu.Unlock()
			return true
		}
		freed := st.freed
		o.mu.Unlock()
		if timeout == nil {
			if o.wait <= 0 {
				return false
			}
			t := time.NewTimer(o.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// release gives back a slot acquire took, and wakes the calls waiting for one.
func (o *origins) release(name string) {
	if o.max <= 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.inFlight[name]
	st.n--
	close(st.freed)
	if st.n == 0 {
		delete(o.inFlight, name)
		return
	}
	st.freed = make(chan struct{})
}
