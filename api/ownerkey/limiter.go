package ownerkey

import (
	"sync"
	"time"
)

// Limiter counts wrong keys per client address within a fixed window. Safe for
// concurrent use.
type Limiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	clock  func() time.Time
	max    int
	by     map[string]*strikes
}

// strikes are one address's wrong keys since start.
type strikes struct {
	start time.Time
	n     int
}

// NewLimiter refuses an address for the rest of a window once it has limit
// wrong keys in it, remembering max addresses at most.
func NewLimiter(limit int, window time.Duration, max int, clock func() time.Time) *Limiter {
	return &Limiter{limit: limit, window: window, clock: clock, max: max, by: map[string]*strikes{}}
}

// Blocked is nil when addr may present a key, else a *ThrottledError saying how
// long it must still wait.
func (l *Limiter) Blocked(addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.by[addr]
	if st == nil && len(l.by) >= l.max {
		addr, st = overflow, l.by[overflow]
	}
	if st == nil {
		return nil
	}
	left := l.window - l.clock().Sub(st.start)
	if left <= 0 {
		delete(l.by, addr)
		return nil
	}
	if st.n < l.limit {
		return nil
	}
	return &ThrottledError{Limit: l.limit, Window: l.window, RetryAfter: left.Round(time.Second) + time.Second}
}

// Fail counts a wrong key from addr.
func (l *Limiter) Fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	st := l.by[addr]
	if st == nil || now.Sub(st.start) >= l.window {
		if len(l.by) >= l.max {
			for a, v := range l.by {
				if now.Sub(v.start) >= l.window {
					delete(l.by, a)
				}
			}
		}
		if len(l.by) >= l.max { // every address is striking: the new ones share one count
			addr = overflow
		}
		if st = l.by[addr]; st == nil || now.Sub(st.start) >= l.window {
			st = &strikes{start: now}
			l.by[addr] = st
		}
	}
	st.n++
}

// overflow is the count the addresses share that the table has no room for: an
// attacker holding more addresses than it remembers throttles them together,
// rather than emptying the table to start its own counts again.
const overflow = "*"
