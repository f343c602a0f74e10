package e2e_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A node answers at most Dispatch.MaxCalls calls at once: over TCP, with that
// many held by a gated upstream, every further call is refused at once with
// CALL_REFUSED, retry true and what to do, and nothing of it is appended; once
// the held calls have their receipts, the same call sent again is taken.
func TestBusCallsPastTheBoundAreRefusedAtOnce(t *testing.T) {
	const bound = 4
	up := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "held"))
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		c.Dispatch.MaxCalls = bound
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
	})
	addHTTPRow(t, g.n, "HOLD", "GET "+up.URL+"/hold", "")
	c1 := g.connect(t, "c1")
	tok := wire.WithToken(busToken(t, g.n, "c1-agent", "HOLD"))

	held := make(chan error, bound)
	for range bound {
		go func() {
			rc, err := busCall(t, c1, "c1", "HOLD", "x", tok)
			if err == nil && rc.Result != "HTTP 200:held" {
				err = errors.New("result " + rc.Result)
			}
			held <- err
		}()
	}
	for range bound {
		<-up.Arrived()
	}
	requests, _ := logCounts(t, g.n)

	const past = 4 * bound
	var wg sync.WaitGroup
	errs := make(chan error, past)
	for range past {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := busCall(t, c1, "c1", "HOLD", "x", tok)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, wire.ErrCallRefused) || !errors.Is(err, wire.ErrCallRetry) ||
			!strings.Contains(err.Error(), "busy: this node answers at most 4 calls at once") || !strings.Contains(err.Error(), "make fewer calls at once") {
			t.Fatalf("a call past the bound: %v; want busy, refused with retry", err)
		}
	}
	reply := rawCall(t, c1, wire.CallSubject("c1", "HOLD"), []byte("not even an event"))
	var r wire.CallRefused
	if reply.Type != wire.TypeCallRefused || json.Unmarshal(reply.Data, &r) != nil || !r.Retry || r.HowToFix == "" || r.Key != "HOLD" {
		t.Fatalf("the reply past the bound: %s %s", reply.Type, reply.Data)
	}
	if n, _ := logCounts(t, g.n); n != requests {
		t.Fatalf("refused calls appended %d requests", n-requests)
	}

	up.Release()
	for range bound {
		if err := <-held; err != nil {
			t.Fatalf("a held call: %v", err)
		}
	}
	// A slot is given back just after its reply: the call sent again, as the
	// refusal says, is taken once one is.
	for {
		rc, err := busCall(t, c1, "c1", "HOLD", "x", tok)
		if errors.Is(err, wire.ErrCallRetry) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil || rc.Result != "HTTP 200:held" {
			t.Fatalf("a call once the held ones are answered: %+v, %v", rc.ReceiptSummary, err)
		}
		break
	}
	if n, rcs := logCounts(t, g.n); n != requests+1 || rcs != bound+1 {
		t.Fatalf("the log holds %d requests and %d receipts, want %d and %d", n, rcs, requests+1, bound+1)
	}
}
