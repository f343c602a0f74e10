package wire

import (
	"strconv"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// A key's subjects are its prefixes and the key, whether the cache holds them
// or not; the cache holds at most maxCachedKeys keys, never an invalid one, and
// answers a key it holds without an allocation.
func TestSubjectsCachedPerKey(t *testing.T) {
	for i := range maxCachedKeys + 100 {
		key := "K_" + strconv.Itoa(i)
		if RequestSubject(key) != requestPrefix+key || ReceiptSubject(key) != receiptPrefix+key {
			t.Fatalf("%s: subjects %s, %s", key, RequestSubject(key), ReceiptSubject(key))
		}
	}
	for _, bad := range []string{"a.b", "a b", "*", ""} {
		if RequestSubject(bad) != requestPrefix+bad || ReceiptSubject(bad) != receiptPrefix+bad {
			t.Fatalf("%q: subjects %s, %s", bad, RequestSubject(bad), ReceiptSubject(bad))
		}
	}
	subjectCache.mu.RLock()
	n := len(subjectCache.m)
	_, invalid := subjectCache.m["a.b"]
	subjectCache.mu.RUnlock()
	if n > maxCachedKeys || invalid {
		t.Fatalf("the cache holds %d keys (at most %d), an invalid one: %v", n, maxCachedKeys, invalid)
	}
	key := string([]byte("WEATHER"))
	RequestSubject(key)
	if a := allocstest.PerRun(t, 100, func() { RequestSubject(key); ReceiptSubject(key) }); a != 0 {
		t.Errorf("a cached key's subjects cost %v allocations", a)
	}
}
