package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/nats-io/nats.go"
)

// c2 chose as its invocation id the one derived from c1's envelope, first:
// c1's call runs under the id scoped to c1. The same envelope sent again by c1
// is answered with that call's receipt: after the log's duplicate window, and
// inside it while other calls keep a pack of requests in flight (the copy is
// packed, so stored again).
func TestBusCallSentAgainUnderScopedIDGetsItsReceipt(t *testing.T) {
	for _, c := range []struct {
		name   string
		window time.Duration
		load   bool
	}{
		{"after the window", idemWindow, false},
		{"inside the window, packed", time.Minute, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newIdemWorld(t, c.window, false)
			n := w.g.n
			c1, c2 := w.g.connect(t, "c1"), w.g.connect(t, "c2")
			_, e1, inv := callEnvelope(t, "c1", "from-c1", busToken(t, n, "c1-agent", "IDEM"), "", "")
			_, e2, _ := callEnvelope(t, "c2", "from-c2", busToken(t, n, "c2-agent", "IDEM"), "", inv)
			if rc, err := sendCall(c2, "c2", e2, 5*time.Second); err != nil || rc.InvocationID != inv {
				t.Fatalf("c2: %+v %v", rc.ReceiptSummary, err)
			}
			first, err := sendCall(c1, "c1", e1, 5*time.Second)
			if err != nil || first.InvocationID != wire.ScopedInvocationID("c1", inv) {
				t.Fatalf("c1: %+v %v", first.ReceiptSummary, err)
			}
			var done atomic.Bool
			var load sync.WaitGroup
			if c.load {
				for range 48 {
					load.Add(1)
					go func() {
						defer load.Done()
						for !done.Load() {
							_, b, _ := callEnvelope(t, "c2", "load", "", "", "")
							sendCall(c2, "c2", b, 10*time.Second)
						}
					}()
				}
				time.Sleep(300 * time.Millisecond)
			} else {
				pastWindow()
			}
			defer func() { done.Store(true); load.Wait() }()
			for i := range 5 {
				rc, err := sendCall(c1, "c1", e1, 5*time.Second)
				if err != nil || rc.InvocationID != first.InvocationID || rc.Result != first.Result {
					t.Fatalf("sent again (%d): %+v %v; want the first receipt under %s", i, rc.ReceiptSummary, err, first.InvocationID)
				}
			}
		})
	}
}

// A packed call claims its id while in flight (calls.packing), so that no
// other request under it shares its pack, and no other call under the id takes
// the claim away: here one answered at once (refused: too large for the log
// once encoded again, its raw '<' escaped) is sent between a call and a copy
// of it while other calls keep a pack of requests in flight. Were the claim
// dropped, the copy would be packed too, could share the first's pack (one
// sequence, by which the worker tells copies apart), and both would run; sent
// from another client (c2, under c1's event id), its request would run under
// c1's id and its receipt could be c1's answer. The same client's copy runs
// once and c1 gets its own receipt. Another client's copy never makes a second
// receipt under an id nor reaches c1's answer; c1's call itself may go
// unanswered when c2's copy of its event id is stored first (the log then
// takes c1's as a duplicate of it), which a client that hands its event ids to
// no one never meets.
func TestBusCallClaimDroppedByAnotherCallRunsOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("megabytes of calls a second for tens of seconds: run it without -race (go test ./... does); TestPackingClaimIsHeldUntilItsCallReleasesIt and TestBusCallsPackedRunOnce cover the claim under -race")
	}
	if testing.Short() {
		t.Skip("about 35 s of heavy calls: run it without -short")
	}
	for _, from := range []string{"c1", "c2"} {
		t.Run("copy from "+from, func(t *testing.T) {
			w := &idemWorld{g: &guardedNode{seeds: map[string]string{}}}
			w.up = upstreamtest.Start(t, func(rw http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(rw, `{"hit":%d,"q":%q}`, upstreamtest.Hit(r), r.URL.Query().Get("q"))
			})
			n := nodetest.Start(t, func(c *capdir.Config) {
				c.Log.Listen = "127.0.0.1:0"
				c.Log.DuplicateWindow = time.Minute
				c.Dispatch.MaxPayload = 2 << 20 // a call may carry 1.4 MB of raw '<'
				w.g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
				w.g.seeds["c2"] = addBusIdentity(t, c.Log.DataDir, "c2", eventlog.RoleClient)
			})
			w.g.n = n
			row, _ := json.Marshal(map[string]any{"key": "IDEM", "type": "http", "target": "GET " + w.up.URL + "/v1/thing?q=$1", "category": "tools",
				"content": "# WHAT: Fetch one thing from a local upstream that counts its calls.\n# ARGS: $1=query\n# EX: [IDEM]x[/IDEM]\n# OUTPUT: JSON"})
			if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(row)); code != 201 {
				t.Fatalf("POST row: %d %s", code, body)
			}
			conn := map[string]*busClient{"c1": w.g.connect(t, "c1"), "c2": w.g.connect(t, "c2")}
			tok := map[string]string{"c1": busToken(t, n, "c1-agent", "IDEM"), "c2": busToken(t, n, "c2-agent", "IDEM")}
			// Large calls (no token: refused at the gate) keep a pack of requests in flight.
			lc := w.g.connect(t, "c2")
			var done atomic.Bool
			var load sync.WaitGroup
			big := strings.Repeat("z", 900<<10)
			for range 10 {
				load.Add(1)
				go func() {
					defer load.Done()
					for !done.Load() {
						_, b, _ := callEnvelope(t, "c2", big, "", "", "")
						sendCall(lc, "c2", b, 3*time.Second)
					}
				}()
			}
			time.Sleep(300 * time.Millisecond)
			const rounds = 60
			answers := make([]string, rounds)
			invs := make([]string, rounds)
			var wg sync.WaitGroup
			send := func(client string, data []byte, into *string) {
				bc := conn[client]
				ib := bc.nc.NewInbox()
				ch := make(chan *nats.Msg, 1)
				s, err := bc.nc.ChanSubscribe(ib, ch)
				if err != nil {
					t.Fatal(err)
				}
				if err := bc.nc.PublishRequest(wire.CallSubject(client, "IDEM"), ib, data); err != nil {
					t.Fatal(err)
				}
				bc.nc.Flush()
				if into == nil { // its answer is not looked at: not waited for
					s.Unsubscribe()
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer s.Unsubscribe()
					select {
					case m := <-ch:
						var rc wire.Receipt
						if ev, err := wire.DecodeShared(m.Data); err == nil && ev.Type == wire.TypeReceipt && ev.DataAs(&rc) == nil {
							*into = rc.Result
						}
					case <-time.After(5 * time.Second):
					}
				}()
			}
			for i := range rounds {
				ev, e, inv := callEnvelope(t, "c1", fmt.Sprintf("c1-%d", i), tok["c1"], "", "")
				invs[i] = inv
				_, sib, _ := callEnvelope(t, from, "PLACEHOLDER", tok[from], ev.ID, "")
				sib = bytes.Replace(sib, []byte("PLACEHOLDER"), bytes.Repeat([]byte("<"), 1450<<10), 1)
				again := e
				if from != "c1" {
					_, again, _ = callEnvelope(t, from, fmt.Sprintf("%s-%d", from, i), tok[from], ev.ID, "")
				}
				send("c1", e, &answers[i])
				send(from, sib, nil)
				time.Sleep(time.Duration(2+i%12) * time.Millisecond)
				send(from, again, nil)
			}
			wg.Wait()
			done.Store(true)
			load.Wait()
			nodetest.WaitDispatchIdle(t, n.Log())
			results := map[string][]string{}
			if err := n.Log().Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
				var rc wire.Receipt
				if s.Type == wire.TypeReceipt && s.DataAs(&rc) == nil {
					results[rc.InvocationID] = append(results[rc.InvocationID], rc.Actor+" "+rc.Result)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, inv := range invs {
				own := strings.Contains(answers[i], fmt.Sprintf(`"c1-%d"`, i))
				scoped := results[wire.ScopedInvocationID("c1", inv)]
				switch {
				case from == "c1" && (len(results[inv]) != 1 || !own):
					t.Errorf("c1's invocation %s: receipts %q; c1 was answered %q", inv, results[inv], answers[i])
				case from != "c1" && (len(results[inv]) > 1 || len(scoped) > 1 || answers[i] != "" && !own):
					t.Errorf("c1's invocation %s: receipts %q, under c1's scoped id %q; c1 was answered %q", inv, results[inv], scoped, answers[i])
				}
			}
		})
	}
}
