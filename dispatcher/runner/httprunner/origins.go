package httprunner

import (
	"net/url"
	"strings"
	"sync"
)

// origins counts the calls in flight to each origin, so that one origin that
// hangs cannot hold every worker of the node: a call over the bound is refused at
// once (ERR:http:origin_busy), nothing sent.
type origins struct {
	max      int // calls in flight per origin; no bound when 0
	mu       sync.Mutex
	inFlight map[string]int // origin -> calls in flight; no entry at 0
}

// originOf is u's origin as the bound counts it: scheme://host[:port], lowercased.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// acquire takes a slot for origin, and reports false when its bound is reached.
// Each true must be followed by one release.
func (o *origins) acquire(origin string) bool {
	if o.max <= 0 {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inFlight[origin] >= o.max {
		return false
	}
	if o.inFlight == nil {
		o.inFlight = map[string]int{}
	}
	o.inFlight[origin]++
	return true
}

// release gives back a slot acquire took.
func (o *origins) release(origin string) {
	if o.max <= 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inFlight[origin] <= 1 {
		delete(o.inFlight, origin)
		return
	}
	o.inFlight[origin]--
}
