package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/nats-io/nats.go"
)

// A wire.Client makes many calls on one subscription: concurrent calls each get
// their own receipt, the connection holds one subscription whatever the number of
// calls, and a closed client says so instead of waiting.
func TestBusClientManyCallsOnOneSubscription(t *testing.T) {
	g := startGuardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c1 := g.connect(t, "c1")
	bc, err := wire.NewClient(c1.nc, "c1")
	if err != nil {
		t.Fatal(err)
	}
	withToken := wire.WithToken(busToken(t, g.n, "c1-agent", "GREET"))
	if _, err := bc.Invoke(ctx, "GREET", "first", withToken); err != nil {
		t.Fatal(err)
	}
	subs := c1.nc.NumSubscriptions() // the client's and the connection's reply inbox
	const calls = 32
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("Ada%d", i)
			rc, err := bc.Invoke(ctx, "GREET", name, withToken)
			switch {
			case err != nil:
				errs <- err
			case rc.Result != "Hello, "+name+"!" || rc.Actor != "token:c1-agent":
				errs <- fmt.Errorf("call %d got %+v", i, rc)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := c1.nc.NumSubscriptions(); n != subs {
		t.Fatalf("%d subscriptions after %d more calls, %d after the first", n, calls, subs)
	}
	// Two calls repeating one chosen invocation id at once both get its receipt.
	chosen := wire.WithInvocationID("inv_client-chosen-1")
	same := make(chan wire.Receipt, 2)
	for range 2 {
		go func() {
			rc, err := bc.Invoke(ctx, "GREET", "Bo", withToken, chosen)
			if err != nil {
				t.Error(err)
			}
			same <- rc
		}()
	}
	a, b := <-same, <-same
	if a.InvocationID != "inv_client-chosen-1" || a.Trace != b.Trace || a.Result != "Hello, Bo!" || b.Result != a.Result {
		t.Fatalf("two calls with one chosen id: %+v and %+v", a.ReceiptSummary, b.ReceiptSummary)
	}
	// A bad option is refused before anything is published.
	if _, err := bc.Invoke(ctx, "GREET", "x", wire.WithToken("")); !errors.Is(err, wire.ErrBadOption) {
		t.Fatalf("empty token: %v", err)
	}
	if err := bc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Invoke(ctx, "GREET", "late", withToken); !errors.Is(err, wire.ErrClientClosed) {
		t.Fatalf("Invoke after Close: %v", err)
	}
	if n := c1.nc.NumSubscriptions(); n != subs-1 {
		t.Fatalf("%d subscriptions after Close, %d before", n, subs)
	}

	// Without the client's inbox prefix NewClient says what to fix.
	seed, _ := nats.NkeyOptionFromSeed(g.seeds["c2"])
	plain, err := nats.Connect(g.n.Log().ClientURL(), seed)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := wire.NewClient(plain, "c2"); !errors.Is(err, wire.ErrInboxPrefix) {
		t.Fatalf("NewClient without the inbox prefix: %v", err)
	}
}

// A bus client chooses its invocation ids, so it can call a row first under the
// id one of its flow's steps will have (StepInvocationID): the flow does not take
// that call's receipt as its step's result.
func TestBusClientCannotPreRunAFlowStep(t *testing.T) {
	g := startGuardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	row := `{"key":"GREET_FLOW","type":"flow","content":"# WHAT: greets through GREET\nGREET: $1"}`
	if code, body := nodetest.Do(t, g.n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST flow: %d %s", code, body)
	}
	c1 := g.connect(t, "c1")
	tok := wire.WithToken(busToken(t, g.n, "c1-agent", "GREET", "GREET_FLOW"))
	const flowID = "inv_chosen-flow"
	pre, err := wire.Invoke(ctx, c1.nc, "c1", "GREET", "Ada", tok, wire.WithInvocationID(dispatcher.StepInvocationID(flowID, "1")))
	if err != nil || !pre.OK {
		t.Fatalf("the pre-run: %+v, %v", pre, err)
	}
	rc, err := wire.Invoke(ctx, c1.nc, "c1", "GREET_FLOW", "Ada", tok, wire.WithInvocationID(flowID))
	if err != nil {
		t.Fatal(err)
	}
	if rc.OK || !strings.Contains(rc.Result, "another call") {
		t.Fatalf("the flow after a pre-run of its step: %+v; want a failure naming the step id as another call's", rc.ReceiptSummary)
	}
	// Without a pre-run, the same flow runs its own step.
	rc, err = wire.Invoke(ctx, c1.nc, "c1", "GREET_FLOW", "Bo", tok)
	if err != nil || !rc.OK || rc.Result != "Hello, Bo!" || len(rc.Children) != 1 {
		t.Fatalf("the flow: %+v, %v", rc, err)
	}
}
