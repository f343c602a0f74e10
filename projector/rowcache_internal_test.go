package projector

import "testing"

// A row read before a directory commit is not cached after the commit's
// invalidation: it may be the version the commit replaced.
func TestRowCacheRefusesAFillThatRacedACommit(t *testing.T) {
	c := newRowCache()
	_, gen := c.get("K")
	c.invalidate([]dirChange{{key: "OTHER"}})
	c.put("K", &cachedRow{Fingerprint: "old"}, gen)
	if r, _ := c.get("K"); r != nil {
		t.Fatal("a fill read before a commit was cached after it")
	}
	_, gen = c.get("K")
	c.put("K", &cachedRow{Fingerprint: "new"}, gen)
	if r, _ := c.get("K"); r == nil || r.Fingerprint != "new" {
		t.Fatalf("fill after the commit: %+v", r)
	}
	c.invalidate([]dirChange{{key: "K"}})
	if r, _ := c.get("K"); r != nil {
		t.Fatal("invalidated row still cached")
	}
}

func TestRowCacheIsBounded(t *testing.T) {
	c := newRowCache()
	for i := 0; i < rowCacheMax+100; i++ {
		_, gen := c.get("")
		c.put(string(rune('a'+i%26))+string(rune(i)), &cachedRow{}, gen)
	}
	if len(c.m) > rowCacheMax {
		t.Fatalf("cache holds %d rows, bound %d", len(c.m), rowCacheMax)
	}
}
