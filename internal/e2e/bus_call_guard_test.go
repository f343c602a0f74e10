package e2e_test

import (
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
)

// A call that waits under an id another sender's request holds, because the
// node's projection had not folded that request when the call looked, is woken
// by that sender's receipt: it is never given the other caller's receipt. It
// gets its own, under the id scoped to its client (the responder reads whose the
// asked id is from the log when the receipt comes), or, when even that cannot
// tell, it is refused (not_yet_known, retry) and sent again it gets its own.
//
// c1 publishes a request under X; c2 calls with an event id that derives X. The
// node's data projection is held back (an OnApplied hook) from before c1's
// request until c1's receipt is in the log, and the node does not wait for its
// projection (Settings.Wait of a nanosecond), so c2's call finds no first
// request under X and waits there, and c1's receipt wakes it. c1 is told of its
// receipt on its notice subject all the same.
func TestBusCallWokenByAnotherSendersReceiptIsNotGivenIt(t *testing.T) {
	// The upstream holds the first run of each attempt's c1 request until the
	// attempt lets it go (upGate).
	arrived := make(chan string, 16)
	var upGate atomic.Pointer[chan struct{}]
	up := upstreamtest.Start(t, func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		if gate := upGate.Load(); gate != nil && strings.HasPrefix(q, "held-") {
			arrived <- q
			<-*gate
		}
		fmt.Fprintf(rw, `{"q":%q}`, q)
	})
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		c.HTTPRunner.Timeout = 10 * time.Second
		c.Projector.Wait = time.Nanosecond
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
		g.seeds["c2"] = addBusIdentity(t, c.Log.DataDir, "c2", eventlog.RoleClient)
	})
	n := g.n
	row, _ := json.Marshal(map[string]any{"key": "IDEM", "type": "http", "target": "GET " + up.URL + "/v1/thing?q=$1", "category": "tools",
		"content": "# WHAT: Fetch one thing from a local upstream.\n# ARGS: $1=query\n# EX: [IDEM]x[/IDEM]\n# OUTPUT: JSON"})
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(row)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	c1, c2 := g.connect(t, "c1"), g.connect(t, "c2")
	tok1, tok2 := busToken(t, n, "c1-agent", "IDEM"), busToken(t, n, "c2-agent", "IDEM")

	var hold atomic.Bool
	held := make(chan struct{}, 1)
	var releaseProj chan struct{}
	n.Projector().OnApplied(func(stream string, _ []eventlog.Stored) {
		if stream == wire.DataStream && hold.Load() {
			held <- struct{}{}
			<-releaseProj
		}
	})
	// attempt returns c2's call's reply and its request event. Rarely, the
	// node reads the projection only after it is let go (its goroutine came late):
	// c2's call then waits under its own scoped id and gets its own receipt, and
	// the attempt is made again.
	attempt := func(i int) (wire.Event, []byte, string) {
		id := wire.NewInvocationID(time.Now())
		releaseProj = make(chan struct{})
		var once sync.Once
		letGo := func() { once.Do(func() { hold.Store(false); close(releaseProj) }) }
		defer letGo()
		gate := make(chan struct{})
		var upOnce sync.Once
		releaseUp := func() { upOnce.Do(func() { upGate.Store(nil); close(gate) }) }
		defer releaseUp()
		upGate.Store(&gate)
		hold.Store(true)
		reset, err := n.Log().NewEvent(wire.TypeBreakerReset, "test", eventlog.BreakerReset{Key: "IDEM"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Log().Append(ctx, wire.BreakerSubject("IDEM"), reset); err != nil {
			t.Fatal(err)
		}
		select {
		case <-held: // the data projection has folded the reset and goes no further
		case <-ctx.Done():
			t.Fatal("the projection never held")
		}
		// c1's request: it is told of its own receipt on its notice subject,
		// c2's call replying under the same id notwithstanding.
		mine := make(chan wire.Receipt, 1)
		go func() {
			rc, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", fmt.Sprintf("held-c1-%d", i), wire.WithToken(tok1), wire.WithInvocationID(id))
			if err != nil {
				t.Errorf("c1's request: %v", err)
			}
			mine <- rc
		}()
		select {
		case <-arrived: // c1's request runs, held at the upstream
		case <-ctx.Done():
			t.Fatal("c1's request never ran")
		}
		ev, err := wire.NewEvent(time.Now(), wire.TypeInvocationRequested, wire.ClientActor("c2"),
			wire.InvocationRequest{Key: "IDEM", Body: fmt.Sprintf("from-c2-%d", i), Token: tok2})
		if err != nil {
			t.Fatal(err)
		}
		ev.ID = strings.ToUpper(strings.TrimPrefix(id, wire.InvocationPrefix))
		call, err := wire.Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		replies := make(chan wire.Event, 1)
		go func() {
			m, err := c2.nc.RequestWithContext(ctx, wire.CallSubject("c2", "IDEM"), call)
			var reply wire.Event
			if err == nil {
				reply, err = wire.Decode(m.Data)
			}
			if err != nil {
				t.Errorf("c2's call: %v", err)
			}
			replies <- reply
		}()
		awaitSubject(t, ctx, n, wire.BusRequestSubject("c2", "IDEM"))
		releaseUp()
		for len(nodetest.Receipts(t, n.Log(), id)) == 0 {
			select {
			case <-ctx.Done():
				t.Fatal("c1's receipt never reached the log")
			case <-time.After(5 * time.Millisecond):
			}
		}
		letGo()
		reply := <-replies
		if rc := <-mine; rc.InvocationID != id || !strings.Contains(rc.Result, "held-c1") {
			t.Fatalf("c1's request: %+v %s; want its own receipt under %s", rc.ReceiptSummary, rc.Result, id)
		}
		return reply, call, id
	}
	reply, call, id := attempt(0)
	if strings.Contains(string(reply.Data), "held-c1") {
		t.Fatalf("c2's call was given c1's receipt: %s %s", reply.Type, reply.Data)
	}
	var own wire.Receipt
	if reply.Type == wire.TypeCallRefused {
		var refused wire.CallRefused
		if reply.DataAs(&refused) != nil || !refused.Retry || !strings.Contains(refused.Error, "not_yet_known") {
			t.Fatalf("c2's call woken by c1's receipt: %s %s; want its own receipt, or CALL_REFUSED not_yet_known with retry", reply.Type, reply.Data)
		}
		reply = rawCall(t, c2, wire.CallSubject("c2", "IDEM"), call) // sent again
	}
	if reply.Type != wire.TypeReceipt || reply.DataAs(&own) != nil || !strings.Contains(own.Result, "from-c2") ||
		!strings.HasPrefix(own.InvocationID, wire.InvocationPrefix+"c2"+wire.ScopeSeparator) {
		t.Fatalf("c2's call: %s %s; want its own receipt under its scoped id", reply.Type, reply.Data)
	}
	rc, err := wire.Invoke(ctx, c1.nc, "c1", "IDEM", "held-c1-0", wire.WithToken(tok1), wire.WithInvocationID(id))
	if err != nil || rc.InvocationID != id || !strings.Contains(rc.Result, "held-c1") {
		t.Fatalf("c1's request sent again: %+v %s, %v; want its own receipt under %s", rc.ReceiptSummary, rc.Result, err, id)
	}
}

// awaitSubject returns once the data stream holds an event on subject.
func awaitSubject(t *testing.T, ctx context.Context, n *capdir.Node, subject string) {
	t.Helper()
	for {
		seq, err := n.Log().LastSubjectSeq(ctx, wire.DataStream, subject)
		if err != nil {
			t.Fatal(err)
		}
		if seq > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing on %s", subject)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
