package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"go.uber.org/goleak"
)

// An http row whose upstream hangs, called by twice as many callers as there are
// workers, cannot take every worker: an fn row called meanwhile is answered while
// the upstream still holds every call it got (before the first runner timeout).
// Every slow call ends with the runner's timeout literal, or, over the per-origin
// bound, with the bound's literal at once; no goroutine is left once the node
// stops.
func TestSlowUpstreamCannotTakeEveryWorker(t *testing.T) {
	before := goleak.IgnoreCurrent()
	const workers, slowCallers, fastCallers = 4, 8, 6
	const timeout = 3 * time.Second
	up := upstreamtest.StartGated(t, nil) // never released: it hangs every call
	defer up.Close()
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.Dispatch.Workers = workers
		c.HTTPRunner.Timeout = timeout
	})
	postRow := func(row string) {
		t.Helper()
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("POST row: %d %s", code, body)
		}
	}
	postRow(`{"key":"SLOW","type":"http","target":"GET ` + up.URL + `/slow?q=$1"}`)
	postRow(`{"key":"FAST","type":"fn","target":"echo","content":"[\"fast $1\"]"}`)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base, err := n.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(key, body string) wire.Receipt {
		rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: key, Body: body, Credential: wire.OwnerActor})
		if err != nil {
			t.Errorf("invoke %s %s: %v", key, body, err)
		}
		return rc
	}
	slow := make([]wire.Receipt, slowCallers)
	var slowDone sync.WaitGroup
	for i := range slowCallers {
		slowDone.Add(1)
		go func() {
			defer slowDone.Done()
			slow[i] = invoke("SLOW", fmt.Sprint(i))
		}()
	}
	// Every slow request is in the log, so the fast ones come after them, and the
	// upstream holds as many as it will get before fast calls begin. (Requests
	// appended together may share a message: the log's events are counted.)
	for {
		last, err := n.Log().LastSeq(ctx, wire.DataStream)
		if err != nil {
			t.Fatal(err)
		}
		events := 0
		if last > base {
			if err := n.Log().ReadRange(ctx, wire.DataStream, base+1, last, 256, func(b []eventlog.Stored) error {
				events += len(b)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if events >= slowCallers {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the slow requests never reached the log")
		case <-time.After(5 * time.Millisecond):
		}
	}
	for range workers - 1 {
		select {
		case <-up.Arrived():
		case <-ctx.Done():
			t.Fatal("the hanging upstream never received the slow calls")
		}
	}

	fast := make([]wire.Receipt, fastCallers)
	var fastDone sync.WaitGroup
	for i := range fastCallers {
		fastDone.Add(1)
		go func() {
			defer fastDone.Done()
			fast[i] = invoke("FAST", fmt.Sprint(i))
		}()
	}
	fastDone.Wait()
	held, gone := up.Hits(), up.Ended()
	if gone > 0 {
		t.Errorf("the fast calls were answered only after %d of the %d slow calls the upstream held ended (the runner's %v timeout): "+
			"the hanging upstream held every worker", gone, held, timeout)
	}
	for i, rc := range fast {
		if !rc.OK || rc.Result != fmt.Sprintf("fast %d", i) {
			t.Errorf("fast call %d: %s %q", i, rc.Status, rc.Result)
		}
	}

	slowDone.Wait()
	timedOut, busy := 0, 0
	for i, rc := range slow {
		switch {
		case rc.Result == "ERR:http:timeout:"+timeout.String():
			timedOut++
		case strings.HasPrefix(rc.Result, "ERR:http:origin_busy:"+up.URL+":"):
			busy++
		default:
			t.Errorf("slow call %d: %s %q; want ERR:http:timeout:%v or ERR:http:origin_busy:%s:…", i, rc.Status, rc.Result, timeout, up.URL)
		}
	}
	// The default bound: three quarters of the workers.
	if held := int(up.Hits()); timedOut != held || held != workers*3/4 || busy != slowCallers-held {
		t.Errorf("the upstream held %d slow calls, %d timed out, %d were refused at the bound; want %d held and timed out, %d refused",
			held, timedOut, busy, workers*3/4, slowCallers-workers*3/4)
	}
	t.Logf("%d workers, %d slow callers: the upstream held %d (each ended ERR:http:timeout:%v), %d refused at the bound after its short wait; %d fast calls answered, %d held calls ended before",
		workers, slowCallers, up.Hits(), timeout, busy, fastCallers, gone)

	nodetest.CheckReplay(t, n)
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	up.Close()
	goleak.VerifyNone(t, before)
}
