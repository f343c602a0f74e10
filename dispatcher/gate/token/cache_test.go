package token

import (
	"crypto/ecdsa"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestVerifyCacheSkipsTheSignatureOnly: a cached token is not verified again (the
// verifier's keys are taken away and it still passes), but its times are: at its
// expiry it is refused and dropped.
func TestVerifyCacheSkipsTheSignatureOnly(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	raw, c := mustMint(t, m, basicRequest(), t0)
	if _, err := v.Verify(raw, t0); err != nil {
		t.Fatal(err)
	}
	if v.cache.len() != 1 {
		t.Fatalf("cache holds %d tokens, want 1", v.cache.len())
	}
	v.keys = map[string]*ecdsa.PublicKey{} // a cache miss would now fail with unknown_kid
	if _, err := v.Verify(raw, t0.Add(30*time.Second)); err != nil {
		t.Fatalf("cached token: %v", err)
	}
	other, _ := mustMint(t, m, basicRequest(), t0)
	if _, err := v.Verify(other, t0); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("uncached token: %v, want unknown_kid", err)
	}
	if _, err := v.Verify(raw, c.ExpiryTime().Add(DefaultLeeway)); !errors.Is(err, ErrExpired) {
		t.Fatalf("cached token past its expiry: %v", err)
	}
	if v.cache.len() != 0 {
		t.Fatalf("expired token still cached (%d entries)", v.cache.len())
	}
	if _, err := v.Verify(raw, t0.Add(-time.Hour)); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("dropped token answered from the cache: %v", err)
	}
}

// TestVerifyCacheNotYetValidFromCache: a cached token's iat is checked too.
func TestVerifyCacheNotYetValidFromCache(t *testing.T) {
	k := mustKey(t)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	raw, c := mustMint(t, mustMinter(t, k), basicRequest(), t0)
	if _, err := v.Verify(raw, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(raw, c.IssuedTime().Add(-time.Minute)); !errors.Is(err, ErrNotYetValid) {
		t.Fatalf("cached token before its iat: %v", err)
	}
}

func TestVerifyCacheIsBounded(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, CacheSize: 4})
	var raws []string
	for range 10 {
		raw, _ := mustMint(t, m, basicRequest(), t0)
		raws = append(raws, raw)
		if _, err := v.Verify(raw, t0); err != nil {
			t.Fatal(err)
		}
		if n := v.cache.len(); n > 4 {
			t.Fatalf("cache holds %d tokens, bound 4", n)
		}
	}
	for _, raw := range raws { // evicted ones verify again, the long way
		if _, err := v.Verify(raw, t0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerifyCacheEvictsExpiredFirst(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, CacheSize: 2, Leeway: -1})
	short := basicRequest()
	short.TTL = time.Second
	rawShort, _ := mustMint(t, m, short, t0)
	rawLong, _ := mustMint(t, m, basicRequest(), t0)
	for _, raw := range []string{rawShort, rawLong} {
		if _, err := v.Verify(raw, t0); err != nil {
			t.Fatal(err)
		}
	}
	rawNew, _ := mustMint(t, m, basicRequest(), t0.Add(2*time.Second))
	if _, err := v.Verify(rawNew, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.cache.get(hashToken(rawLong)); !ok {
		t.Fatal("a live entry was evicted while an expired one was there")
	}
	if _, ok := v.cache.get(hashToken(rawShort)); ok {
		t.Fatal("the expired entry is still cached")
	}
}

func TestVerifyCacheSweepsExpiredEntries(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	short := basicRequest()
	short.TTL = time.Second
	for range 5 {
		raw, _ := mustMint(t, m, short, t0)
		if _, err := v.Verify(raw, t0); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(sweepEvery + time.Second)
	raw, _ := mustMint(t, m, basicRequest(), later)
	if _, err := v.Verify(raw, later); err != nil {
		t.Fatal(err)
	}
	if n := v.cache.len(); n != 1 {
		t.Fatalf("cache holds %d tokens after the sweep, want 1", n)
	}
}

// TestVerifyCacheKeysOnTheExactString: an ECDSA signature (r, s) has a twin (r,
// n-s) that verifies too; the twin is a different string, is not answered from the
// original's entry, and is refused (a token has one form). A tampered copy of a
// cached token is refused.
func TestVerifyCacheKeysOnTheExactString(t *testing.T) {
	k := mustKey(t)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	raw, _ := mustMint(t, mustMinter(t, k), basicRequest(), t0)
	if _, err := v.Verify(raw, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(highS(t, raw), t0); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("twin signature of a cached token: %v, want %v", err, ErrBadSignature)
	}
	if v.cache.len() != 1 {
		t.Fatalf("cache holds %d entries, want the token alone", v.cache.len())
	}
	// A character inside the signature changed (the last ones may carry padding
	// bits, and "AA" may be what they already are).
	at := len(raw) - 10
	swap := byte('A')
	if raw[at] == swap {
		swap = 'B'
	}
	tampered := raw[:at] + string(swap) + raw[at+1:]
	if _, err := v.Verify(tampered, t0); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("tampered copy of a cached token: %v", err)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, CacheSize: 8})
	var raws []string
	for range 16 {
		raw, _ := mustMint(t, m, basicRequest(), t0)
		raws = append(raws, raw)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 64 {
				if _, err := v.Verify(raws[(g+i)%len(raws)], t0.Add(time.Duration(i)*time.Second/8)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
