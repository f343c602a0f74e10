package ownerkey

import (
	"log/slog"
	"sync"
	"time"
)

// limiter counts wrong keys per client address within a fixed window, and
// remembers the addresses the right key came from. Safe for concurrent use: one
// lock section decides each key (check), so keys sent at once from one address
// cannot all pass before any is counted.
type limiter struct {
	mu       sync.Mutex
	limit    int
	window   time.Duration
	clock    func() time.Time
	log      *slog.Logger
	max      int                  // addresses counted, beyond the allowed ones
	by       map[string]*strikes  // an address's wrong keys in its window
	overflow strikes              // the count the addresses share that by has no room for
	swept    time.Time            // the last sweep of expired counts
	allowFor time.Duration        // how long an address that sent the right key is remembered
	maxAllow int                  // the addresses remembered so
	allowed  map[string]time.Time // address -> when it is forgotten
}

// strikes are one address's wrong keys since start.
type strikes struct {
	start time.Time
	n     int
}

// sweepsPerWindow bounds the sweeps of expired counts: at most this many per
// window, whatever the rate of keys, so a wrong key costs O(1) amortised rather
// than a scan of the table.
const sweepsPerWindow = 16

func newLimiter(cfg Config) *limiter {
	return &limiter{limit: cfg.Limit, window: cfg.Window, clock: cfg.Clock, log: cfg.Logger, max: cfg.MaxAddrs,
		by: map[string]*strikes{}, allowFor: cfg.AllowFor, maxAllow: cfg.MaxAllowed, allowed: map[string]time.Time{}}
}

// check decides a key from addr, ok when it was the owner key (compared before,
// in constant time): nil when accepted; ErrWrongKey when wrong, counted against
// addr; a *ThrottledError when addr's own count is spent, whatever the key.
//
// An address with no count of its own while the table is full shares the
// overflow count, which only wrong keys spend and which never refuses a right
// key: an attacker filling the table cannot lock the owner out. An address the
// right key came from within allowFor gets a count of its own even then.
func (l *limiter) check(addr string, ok bool) error {
	l.mu.Lock()
	now := l.clock()
	l.sweep(now)
	st := l.by[addr]
	if st != nil && now.Sub(st.start) >= l.window {
		delete(l.by, addr)
		st = nil
	}
	if st != nil && st.n >= l.limit {
		err := l.throttled(st, now)
		l.mu.Unlock()
		return err
	}
	if ok {
		l.allow(addr, now)
		l.mu.Unlock()
		return nil
	}
	shared := false
	if st == nil {
		if st, shared = l.room(addr, now); shared && st.n >= l.limit {
			err := l.throttled(st, now)
			l.mu.Unlock()
			return err
		}
	}
	st.n++
	n, crossed := st.n, st.n == l.limit
	l.mu.Unlock()
	if crossed && l.log != nil {
		l.log.Warn("owner key: address throttled after wrong keys", "addr", addr, "count", n, "window", l.window.String(), "shared", shared)
	}
	return ErrWrongKey
}

// room is the count a wrong key from addr, which has none, goes to: a new one of
// its own while the table has room (or addr is allowed and its extra room is
// left), else the shared overflow count.
func (l *limiter) room(addr string, now time.Time) (st *strikes, shared bool) {
	if len(l.by) < l.max || l.isAllowed(addr, now) && len(l.by) < l.max+l.maxAllow {
		st = &strikes{start: now}
		l.by[addr] = st
		return st, false
	}
	if now.Sub(l.overflow.start) >= l.window {
		l.overflow = strikes{start: now}
	}
	return &l.overflow, true
}

func (l *limiter) throttled(st *strikes, now time.Time) *ThrottledError {
	left := l.window - now.Sub(st.start)
	return &ThrottledError{Limit: l.limit, Window: l.window, RetryAfter: left.Round(time.Second) + time.Second}
}

// sweep drops the expired counts and allowances, at most sweepsPerWindow times a
// window.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < l.window/sweepsPerWindow {
		return
	}
	l.swept = now
	for a, st := range l.by {
		if now.Sub(st.start) >= l.window {
			delete(l.by, a)
		}
	}
	for a, until := range l.allowed {
		if !now.Before(until) {
			delete(l.allowed, a)
		}
	}
}

// allow remembers addr for allowFor; when maxAllow are remembered, the one
// forgotten soonest makes room (a scan of a small set, on a right key only).
func (l *limiter) allow(addr string, now time.Time) {
	if _, ok := l.allowed[addr]; !ok && len(l.allowed) >= l.maxAllow {
		var oldest string
		for a, until := range l.allowed {
			if oldest == "" || until.Before(l.allowed[oldest]) {
				oldest = a
			}
		}
		delete(l.allowed, oldest)
	}
	l.allowed[addr] = now.Add(l.allowFor)
}

func (l *limiter) isAllowed(addr string, now time.Time) bool {
	until, ok := l.allowed[addr]
	return ok && now.Before(until)
}
