package httprunner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// An origin may have MaxPerOrigin calls in flight: one more waits OriginWait for
// a slot, then fails with ERR:http:origin_busy:<origin>:<max>, nothing sent,
// whatever row or path it calls; another origin is not affected; a call that ends
// (answered or timed out) gives its slot back.
func TestMaxPerOriginRefusesACallOverTheBound(t *testing.T) {
	hang := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "late"))
	other := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "fast"))
	r := newTestRunner(t, func(c *Config) { c.MaxPerOrigin = 2; c.Timeout = 10 * time.Second })
	call := func(target string) runner.Outcome {
		return r.Run(context.Background(), runner.Call{Row: &contract.Row{Key: "X", Type: contract.TypeHTTP, Target: target}})
	}

	held := make([]runner.Outcome, 2)
	var wg sync.WaitGroup
	for i := range held {
		wg.Add(1)
		go func() { defer wg.Done(); held[i] = call("GET " + hang.URL + "/a") }()
	}
	for range held {
		<-hang.Arrived()
	}
	busy := "ERR:http:origin_busy:" + hang.URL + ":2"
	for _, target := range []string{"GET " + hang.URL + "/a", "POST " + hang.URL + "/b?q=1", "GET " + strings.ToUpper(hang.URL[:4]) + hang.URL[4:] + "/c"} {
		o := call(target)
		if o.Result != busy || !errors.Is(o.Err, ErrOriginBusy) || o.Ran {
			t.Errorf("%s over the bound: %q ran=%v err=%v; want %s", target, o.Result, o.Ran, o.Err, busy)
		}
	}
	if n := hang.Hits(); n != 2 {
		t.Errorf("the origin received %d calls; want the 2 in flight only", n)
	}
	if o := call("GET " + other.URL + "/x"); o.Result != "HTTP 200:fast" {
		t.Errorf("another origin: %q; want HTTP 200:fast", o.Result)
	}

	hang.Release()
	wg.Wait()
	for i, o := range held {
		if o.Result != "HTTP 200:late" {
			t.Errorf("held call %d: %q", i, o.Result)
		}
	}
	// Slots given back: two calls fit again; a timed-out one gives its slot back too.
	short := newTestRunner(t, func(c *Config) { c.MaxPerOrigin = 1; c.Timeout = 100 * time.Millisecond })
	stuck := upstreamtest.StartGated(t, nil) // never released: every call times out
	for range 2 {
		o := short.Run(context.Background(), runner.Call{Row: &contract.Row{Key: "X", Type: contract.TypeHTTP, Target: "GET " + stuck.URL}})
		if o.Result != "ERR:http:timeout:100ms" {
			t.Errorf("a call after a timed-out one: %q; want ERR:http:timeout:100ms (its slot back)", o.Result)
		}
	}
}

func TestMaxPerOriginMustNotBeNegative(t *testing.T) {
	_, err := New(Config{Env: testEnv, MaxPerOrigin: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxPerOrigin must not be negative") {
		t.Fatalf("New with MaxPerOrigin -1: %v", err)
	}
}

// A burst to an origin that answers waits for slots instead of being refused:
// six calls at once through a bound of one, each answered in a few milliseconds,
// all succeed; with no wait at all, the calls over the bound are refused.
func TestMaxPerOriginSmoothsABurstToAHealthyOrigin(t *testing.T) {
	var inFlight, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for _, c := range []struct {
		wait    time.Duration
		refused bool
	}{{10 * time.Second, false}, {-1, true}} { // not the default 250ms: a loaded machine takes longer for six calls
		r := newTestRunner(t, func(cf *Config) { cf.MaxPerOrigin = 1; cf.OriginWait = c.wait })
		results := make(chan runner.Outcome, 6)
		var start sync.WaitGroup
		start.Add(1)
		for range cap(results) {
			go func() {
				start.Wait()
				results <- r.Run(context.Background(), runner.Call{Row: &contract.Row{Key: "X", Type: contract.TypeHTTP, Target: "GET " + srv.URL}})
			}()
		}
		start.Done()
		refused := 0
		for range cap(results) {
			switch o := <-results; {
			case o.Result == "HTTP 200:ok":
			case strings.HasPrefix(o.Result, "ERR:http:origin_busy:"):
				refused++
			default:
				t.Errorf("wait %v: %q", c.wait, o.Result)
			}
		}
		if (refused > 0) != c.refused {
			t.Errorf("wait %v: %d of 6 refused", c.wait, refused)
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("the origin had %d calls in flight at once; the bound is 1", m)
	}
}

// A call whose caller gives up while it waits for a slot ends as canceled, not
// as origin_busy: the origin did not refuse it.
func TestMaxPerOriginWaitEndsWithTheCaller(t *testing.T) {
	srv := upstreamtest.StartGated(t, nil)
	r := newTestRunner(t, func(c *Config) { c.MaxPerOrigin = 1; c.OriginWait = time.Minute })
	row := &contract.Row{Key: "X", Type: contract.TypeHTTP, Target: "GET " + srv.URL}
	go r.Run(context.Background(), runner.Call{Row: row})
	<-srv.Arrived() // the one slot is taken
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan runner.Outcome, 1)
	go func() { done <- r.Run(ctx, runner.Call{Row: row}) }()
	time.Sleep(20 * time.Millisecond) // let it start waiting; the outcome is the same if it has not
	cancel()
	o := <-done
	if !strings.HasPrefix(o.Result, "ERR:http:canceled:") || o.Ran {
		t.Fatalf("a call canceled while waiting for a slot: %q ran=%v; want ERR:http:canceled:…", o.Result, o.Ran)
	}
}
