package ownerkey_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
)

const (
	theKey = "the-owner-key-0123456789"
	guess  = "a-guess-of-the-owner-key"
)

func from(addr string) *http.Request {
	return &http.Request{RemoteAddr: addr + ":4000", Header: http.Header{}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newGuard is a Guard of limit 2 that counts 3 addresses, on a clock that stands
// still.
func newGuard(t *testing.T, log *slog.Logger) *ownerkey.Guard {
	t.Helper()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g, err := ownerkey.New(ownerkey.Config{Key: theKey, Limit: 2, MaxAddrs: 3, Clock: func() time.Time { return at }, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if want == nil && got != nil || want != nil && !errors.Is(got, want) {
		t.Errorf("%s: %v; want %v", what, got, want)
	}
}

// An attacker holding more addresses than the table counts fills it with wrong
// keys: the addresses past it share one count, which throttles their wrong keys
// but never the owner's right key, from a new address or one the right key came
// from before; an address the right key came from keeps a count of its own, so
// the shared one does not throttle its typo either. The attacker's own counts
// are not emptied.
func TestGuardFullTableDoesNotLockOutTheOwner(t *testing.T) {
	g := newGuard(t, quiet())
	wantErr(t, "the owner's first right key", g.Check(from("10.0.0.1"), theKey), nil)
	for _, a := range []string{"10.9.0.1", "10.9.0.2", "10.9.0.3", "10.9.0.4", "10.9.0.5"} {
		g.Check(from(a), guess)
		g.Check(from(a), guess)
	}
	for _, a := range []string{"10.9.0.1", "10.9.0.2", "10.9.0.3"} {
		wantErr(t, a+"'s right key after its own wrong ones", g.Check(from(a), theKey), ownerkey.ErrThrottled)
	}
	wantErr(t, "a wrong key from another new address", g.Check(from("10.9.0.6"), guess), ownerkey.ErrThrottled)

	wantErr(t, "the right key from a fresh address", g.Check(from("10.0.0.2"), theKey), nil)
	wantErr(t, "the right key from the address it came from before", g.Check(from("10.0.0.1"), theKey), nil)
	wantErr(t, "a typo from an address the right key came from", g.Check(from("10.0.0.1"), guess), ownerkey.ErrWrongKey)
	wantErr(t, "the right key after the typo", g.Check(from("10.0.0.1"), theKey), nil)
	wantErr(t, "the second typo", g.Check(from("10.0.0.1"), guess), ownerkey.ErrWrongKey)
	wantErr(t, "the right key after its own count is spent", g.Check(from("10.0.0.1"), theKey), ownerkey.ErrThrottled)
}

// Wrong keys sent at once from one address are decided one at a time: no more
// than the limit of them are compared and answered as wrong, the rest are
// throttled. The key is long, so comparing it takes a while, and there are more
// threads than cores, so the keys' checks interleave.
func TestGuardConcurrentWrongKeysFromOneAddress(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(32))
	key := strings.Repeat("k", 1<<16)
	wrongKey := key[1:] + "x" // as long as the key: compared to its end
	for round := 0; round < 3; round++ {
		g, err := ownerkey.New(ownerkey.Config{Key: key, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		counts := map[string]int{}
		start := make(chan struct{})
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := g.Check(from("192.0.2.7"), wrongKey)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, ownerkey.ErrThrottled):
					counts["throttled"]++
				case errors.Is(err, ownerkey.ErrWrongKey):
					counts["wrong"]++
				default:
					counts["other"]++
				}
			}()
		}
		close(start)
		wg.Wait()
		if counts["wrong"] != ownerkey.DefaultLimit || counts["throttled"] != 200-ownerkey.DefaultLimit {
			t.Fatalf("round %d: 200 wrong keys at once: %v; want %d wrong, the rest throttled", round, counts, ownerkey.DefaultLimit)
		}
	}
}

// An address that reaches the limit is logged once, with its address and count,
// never with a key it sent.
func TestGuardLogsOnceWhenAnAddressIsThrottled(t *testing.T) {
	var buf bytes.Buffer
	g := newGuard(t, slog.New(slog.NewJSONHandler(&buf, nil)))
	for i := 0; i < 5; i++ {
		g.Check(from("198.51.100.4"), guess)
	}
	g.Check(from("198.51.100.4"), theKey)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"addr":"198.51.100.4"`) || !strings.Contains(lines[0], `"count":2`) ||
		!strings.Contains(lines[0], `"level":"WARN"`) || !strings.Contains(lines[0], `"window":"1m0s"`) {
		t.Fatalf("the log: %q; want one warning naming the address and the count 2", buf.String())
	}
	if strings.Contains(buf.String(), guess) || strings.Contains(buf.String(), theKey) {
		t.Fatalf("the log holds a key: %s", buf.String())
	}
}
