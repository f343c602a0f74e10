package suggest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSuggest(t *testing.T) {
	s := New()
	for _, k := range []string{"ZZ_TEST_TEMPERATURE", "ZZ_TEST_WIND", "GROK_MODELS", "GROK_CHAT", "NOW",
		"LAST_REPLY_OF", "SEND_BY_CHANNEL", "DIR_PATCH", "WEATHER_TEMPERATURE_NOW", "Mixed_Case"} {
		s.Add(k)
	}
	tests := []struct {
		attempted string
		n         int
		want      []string
	}{
		// One edit away first, then keys sharing words (ZZ, TEST); TEMPERATUR is no word of
		// WEATHER_TEMPERATURE_NOW.
		{"ZZ_TEST_TEMPERATUR", 3, []string{"ZZ_TEST_TEMPERATURE", "ZZ_TEST_WIND"}},
		{"zz_test_temperatur", 1, []string{"ZZ_TEST_TEMPERATURE"}},
		{"GROK_MODLES", 2, []string{"GROK_MODELS", "GROK_CHAT"}},
		{"NWO", 5, []string{"NOW"}}, // a transposition is one edit
		{"NOW", 5, []string{"NOW", "WEATHER_TEMPERATURE_NOW"}},
		{"grok_models", 1, []string{"GROK_MODELS"}},
		{"TEMPERATURE", 5, []string{"ZZ_TEST_TEMPERATURE", "WEATHER_TEMPERATURE_NOW"}},
		{"MIXED_CASE", 1, []string{"Mixed_Case"}},
		{"QQQQQQQQ", 5, nil},
		{"", 5, nil},
		{"NOW", 0, nil},
	}
	for _, tt := range tests {
		if got := s.Suggest(tt.attempted, tt.n); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("Suggest(%q, %d) = %q, want %q", tt.attempted, tt.n, got, tt.want)
		}
	}

	s.Remove("zz_test_temperature")
	s.Remove("ABSENT")
	if got := s.Suggest("ZZ_TEST_TEMPERATUR", 1); !reflect.DeepEqual(got, []string{"ZZ_TEST_WIND"}) {
		t.Errorf("after Remove: %q", got)
	}
	if s.Len() != 9 {
		t.Errorf("Len = %d", s.Len())
	}
	s.Add("mixed_case") // same key, other case: replaces, does not duplicate
	if got := s.Suggest("MIXED_CASE", 2); !reflect.DeepEqual(got, []string{"mixed_case"}) || s.Len() != 9 {
		t.Errorf("re-add: %q, Len %d", got, s.Len())
	}
}

// After any sequence of Add and Remove the index answers like a fresh one.
func TestSuggesterIndexConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := genKeys(rng, 2000)
	s := New()
	live := map[string]bool{}
	for i := range 10000 {
		k := keys[rng.IntN(len(keys))]
		if rng.IntN(3) == 0 {
			s.Remove(k)
			delete(live, k)
		} else {
			s.Add(k)
			live[k] = true
		}
		if i%2500 == 0 {
			checkSuggester(t, s, live)
		}
	}
	checkSuggester(t, s, live)
	fresh := New()
	for k := range live {
		fresh.Add(k)
	}
	for range 200 {
		q := mutate(rng, keys[rng.IntN(len(keys))])
		if a, b := s.Suggest(q, 5), fresh.Suggest(q, 5); !reflect.DeepEqual(a, b) {
			t.Fatalf("Suggest(%q): live index %q, fresh index %q", q, a, b)
		}
	}
}

func checkSuggester(t *testing.T, s *Suggester, live map[string]bool) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.keys) != len(live) {
		t.Fatalf("keys = %d, want %d", len(s.keys), len(live))
	}
	n := 0
	for l, b := range s.byLen {
		for i, k := range b {
			if k.lenIdx != i || len(k.upper) != l || s.keys[k.upper] != k || len(s.lenMask[l]) != len(b) || s.lenMask[l][i] != k.mask {
				t.Fatalf("length index broken at %d/%d: %+v", l, i, k)
			}
			n++
		}
	}
	if n != len(live) {
		t.Fatalf("length index holds %d keys, want %d", n, len(live))
	}
	ids := map[int]bool{}
	for w, set := range s.byWord {
		for i, e := range set {
			k := e.k
			if int(e.id) != k.id || int(e.nwords) != len(k.words) {
				t.Fatalf("word index entry stale: %s -> %s", w, k.upper)
			}
			if s.keys[k.upper] != k || !strings.Contains("_"+k.upper+"_", "_"+w+"_") {
				t.Fatalf("word index broken: %s -> %s", w, k.upper)
			}
			pos := -1
			for j, kw := range k.words {
				if kw == w {
					pos = k.wordIdx[j]
				}
			}
			if pos != i {
				t.Fatalf("word index position broken: %s -> %s at %d, recorded %d", w, k.upper, i, pos)
			}
		}
	}
	for _, k := range s.keys {
		if ids[k.id] || k.id >= s.nextID {
			t.Fatalf("key id %d of %s reused or out of range", k.id, k.upper)
		}
		ids[k.id] = true
	}
}

func TestSuggesterConcurrent(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 200 {
				s.Add(fmt.Sprintf("KEY_%d_%d", i, j))
				if j%3 == 0 {
					s.Remove(fmt.Sprintf("KEY_%d_%d", i, j-3))
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				s.Suggest("KEY_1_10", 5)
			}
		}()
	}
	wg.Wait()
}

var vocab = func() []string {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]string, 800)
	for i := range out {
		b := make([]byte, 3+rng.IntN(7))
		for j := range b {
			b[j] = byte('A' + rng.IntN(26))
		}
		out[i] = string(b)
	}
	return out
}()

// genKeys returns n distinct keys of two to four vocabulary words.
func genKeys(rng *rand.Rand, n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		w := make([]string, 2+rng.IntN(3))
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		k := strings.Join(w, "_")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// mutate applies one random typo.
func mutate(rng *rand.Rand, k string) string {
	i := rng.IntN(len(k))
	switch rng.IntN(3) {
	case 0:
		return k[:i] + k[i+1:]
	case 1:
		return k[:i] + "X" + k[i:]
	default:
		return k[:i] + "Q" + k[i+1:]
	}
}

func suggester100k(tb testing.TB) (*Suggester, []string) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(11, 13))
	keys := genKeys(rng, 100_000)
	s := New()
	for _, k := range keys {
		s.Add(k)
	}
	queries := make([]string, 256)
	for i := range queries {
		if i%4 == 3 {
			queries[i] = vocab[rng.IntN(len(vocab))] // a bare word
		} else {
			queries[i] = mutate(rng, keys[rng.IntN(len(keys))])
		}
	}
	return s, queries
}

func BenchmarkSuggest100k(b *testing.B) {
	s, queries := suggester100k(b)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s.Suggest(queries[i%len(queries)], 5)
		i++
	}
}

// TestSuggest100kLatency checks the p50 target and that a one-typo key is found.
func TestSuggest100kLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-key index")
	}
	s, queries := suggester100k(t)
	rng := rand.New(rand.NewPCG(5, 5))
	durs := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		s.Suggest(q, 5)
		durs = append(durs, time.Since(start))
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	p50 := durs[len(durs)/2]
	t.Logf("p50 %v, p99 %v over %d queries", p50, durs[len(durs)*99/100], len(durs))
	if p50 > 10*time.Millisecond && !raceEnabled {
		t.Errorf("p50 = %v, want under 10ms", p50)
	}
	s.mu.RLock()
	var keys []string
	for _, k := range s.keys {
		keys = append(keys, k.key)
		if len(keys) == 50 {
			break
		}
	}
	s.mu.RUnlock()
	for _, k := range keys {
		q := mutate(rng, k)
		found := false
		for _, g := range s.Suggest(q, 5) {
			found = found || g == k
		}
		if !found {
			t.Errorf("Suggest(%q) misses %q: %q", q, k, s.Suggest(q, 5))
		}
	}
}

func ExampleSuggester() {
	s := New()
	for _, k := range []string{"ZZ_TEST_TEMPERATURE", "ZZ_TEST_WIND", "GROK_MODELS", "NOW", "WEATHER_TEMPERATURE_NOW"} {
		s.Add(k)
	}
	fmt.Println(s.Suggest("ZZ_TEST_TEMPERATUR", 3))
	fmt.Println(s.Suggest("grok_modles", 3))
	fmt.Println(s.Suggest("TEMPERATURE", 3))
	// Output:
	// [ZZ_TEST_TEMPERATURE ZZ_TEST_WIND]
	// [GROK_MODELS]
	// [ZZ_TEST_TEMPERATURE WEATHER_TEMPERATURE_NOW]
}
