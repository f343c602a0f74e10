package token

import (
	"crypto/sha256"
	"sync"
	"time"
	"unsafe"
)

// tokenHash keys the cache: the SHA-256 of the raw token, so a cache hit means
// exactly the string that was verified.
type tokenHash [sha256.Size]byte

// hashToken reads raw in place (sha256 does not keep or modify its input), which
// spares a copy of the token on every call.
func hashToken(raw string) tokenHash {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(raw), len(raw)))
}

// cache remembers verified tokens until their expiry. An expired entry is dropped
// when it is next looked up, by a sweep of every expired entry at most once per
// sweepEvery (done by a put), or to make room: a full cache drops an expired entry,
// or else the soonest to expire among a few sampled (Go's map iteration starts at
// a random place), so a put into a full cache costs O(1).
type cache struct {
	max int // 0: no cache

	mu        sync.RWMutex
	entries   map[tokenHash]cacheEntry
	nextSweep time.Time
}

// sweepEvery is how often a put drops every expired entry.
const sweepEvery = time.Minute

type cacheEntry struct {
	claims *Claims
	until  time.Time // dropped from here on
}

// evictSample is how many entries a full cache looks at to choose one to drop.
const evictSample = 8

func newCache(max int) *cache {
	return &cache{max: max, entries: make(map[tokenHash]cacheEntry)}
}

func (c *cache) get(h tokenHash) (*Claims, bool) {
	if c.max == 0 {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.entries[h]
	c.mu.RUnlock()
	return e.claims, ok
}

func (c *cache) drop(h tokenHash) {
	c.mu.Lock()
	delete(c.entries, h)
	c.mu.Unlock()
}

// put remembers claims until until; now chooses what to drop when full.
func (c *cache) put(h tokenHash, claims *Claims, until, now time.Time) {
	if c.max == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Before(c.nextSweep) {
		c.sweep(now)
	}
	if _, ok := c.entries[h]; !ok && len(c.entries) >= c.max {
		c.evictOne(now)
	}
	c.entries[h] = cacheEntry{claims: claims, until: until}
}

// sweep drops every expired entry. Called with mu held.
func (c *cache) sweep(now time.Time) {
	for h, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, h)
		}
	}
	c.nextSweep = now.Add(sweepEvery)
}

// evictOne drops one entry: the first expired one seen, or the soonest to expire
// of evictSample entries. Called with mu held.
func (c *cache) evictOne(now time.Time) {
	var victim tokenHash
	var soonest time.Time
	n := 0
	for h, e := range c.entries {
		if !now.Before(e.until) {
			victim = h
			break
		}
		if n == 0 || e.until.Before(soonest) {
			victim, soonest = h, e.until
		}
		if n++; n == evictSample {
			break
		}
	}
	delete(c.entries, victim)
}

// len is the number of entries, for tests.
func (c *cache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
