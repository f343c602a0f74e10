package dispatcher_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// withFlows registers the flow runner beside the fn runner.
func withFlows(t *testing.T) func(*dispatcher.ServiceConfig) {
	return func(c *dispatcher.ServiceConfig) {
		fr, err := flowrunner.New(flowrunner.Config{})
		if err != nil {
			t.Fatal(err)
		}
		c.Runners[runner.RunnerFlow] = fr
	}
}

// stepRequestEvents counts the request events of the invocation inv in l.
func stepRequestEvents(t *testing.T, l *eventlog.Log, inv string) int {
	t.Helper()
	n := 0
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var req wire.InvocationRequest
		if s.Type == wire.TypeInvocationRequested && s.DataAs(&req) == nil && req.InvocationID == inv {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A flow whose worker dies after some of its steps completed is run again from
// its redelivered request; the steps that have their receipt are reused, not run
// again, and every invocation of the tree ends with exactly one receipt.
func TestRedeliveredFlowReusesCompletedSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		// crashAfterSteps: the worker dies after both steps, before the flow's
		// receipt (the failpoint); otherwise it is stopped inside the second step.
		crashAfterSteps bool
		wantSecond      int64
	}{
		{name: "before the flow's receipt", crashAfterSteps: true, wantSecond: 1},
		{name: "during the second step", wantSecond: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStack(t)
			var first, second atomic.Int64
			inSecond := make(chan struct{}, 1)
			st.fns.Register("first", func(_ context.Context, args []any) (string, error) {
				first.Add(1)
				return "one:" + args[0].(string), nil
			})
			st.fns.Register("second", func(ctx context.Context, args []any) (string, error) {
				if second.Add(1) == 1 && !tc.crashAfterSteps {
					inSecond <- struct{}{}
					<-ctx.Done() // stopped here, without a receipt
					return "", ctx.Err()
				}
				return "two:" + args[0].(string), nil
			})
			crashed := make(chan struct{}, 1)
			var once atomic.Bool
			a := st.newService(t, func(c *dispatcher.ServiceConfig) {
				withFlows(t)(c)
				c.AckWait, c.Name = 300*time.Millisecond, "a"
				if tc.crashAfterSteps {
					dispatcher.SetFailpoints(c, func(req *wire.InvocationRequest) error {
						if req.Key == "TWO_STEPS" && once.CompareAndSwap(false, true) {
							crashed <- struct{}{}
							return errCrash
						}
						return nil
					}, nil)
				}
			})
			st.run(t)
			st.putRow(t, fnRow("FIRST", "first", `# WHAT: first step`+"\n"+`["$1"]`))
			st.putRow(t, fnRow("SECOND", "second", `# WHAT: second step`+"\n"+`["$1"]`))
			st.putRow(t, contract.Row{Key: "TWO_STEPS", Type: contract.TypeFlow, Enabled: 1,
				Content: "# WHAT: two steps\nFIRST: $1 > SECOND: $PREV"})
			if err := a.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			type res struct {
				rc  wire.Receipt
				err error
			}
			got := make(chan res, 1)
			go func() {
				rc, err := a.Invoke(ctx, wire.InvocationRequest{Key: "TWO_STEPS", Body: "x", Credential: "owner:terminal-key"})
				got <- res{rc, err}
			}()
			if tc.crashAfterSteps {
				<-crashed
			} else {
				<-inSecond
			}
			a.Close() // the worker is gone; its request is unacknowledged

			b := st.newService(t, func(c *dispatcher.ServiceConfig) {
				withFlows(t)(c)
				c.AckWait, c.Name = 300*time.Millisecond, "b"
			})
			if err := b.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			r := <-got
			if r.err != nil {
				t.Fatalf("invoke: %v", r.err)
			}
			if !r.rc.OK || r.rc.Result != "two:one:x" || r.rc.Worker != "b" {
				t.Fatalf("flow receipt %+v", r.rc)
			}
			ids := []string{dispatcher.StepInvocationID(r.rc.InvocationID, "1"), dispatcher.StepInvocationID(r.rc.InvocationID, "2")}
			if !reflect.DeepEqual(r.rc.Children, ids) {
				t.Fatalf("children %q, want %q", r.rc.Children, ids)
			}
			if f, s := first.Load(), second.Load(); f != 1 || s != tc.wantSecond {
				t.Fatalf("first ran %d times, second %d; want 1 and %d", f, s, tc.wantSecond)
			}
			nodetestSettle(t, st)
			for _, id := range append(ids, r.rc.InvocationID) {
				if n := receiptsFor(t, st.log, id); n != 1 {
					t.Errorf("%d receipts for %s, want exactly 1", n, id)
				}
			}
			for _, id := range ids {
				if n := stepRequestEvents(t, st.log, id); n != 1 {
					t.Errorf("%d request events for step %s, want 1", n, id)
				}
			}
			rc1, _, err := st.proj.Receipt(ids[0])
			if err != nil || rc1.Worker != "a" || rc1.Parent != r.rc.InvocationID {
				t.Errorf("first step's receipt %+v (%v): want the one worker a stored, naming the flow", rc1, err)
			}
		})
	}
}

func nodetestSettle(t *testing.T, st *stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.proj.Settle(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
}

// A step's request is folded as an invocation: pending until its receipt.
func TestStepRequestIsPendingUntilItsReceipt(t *testing.T) {
	st := newStack(t)
	st.run(t)
	req := wire.InvocationRequest{InvocationID: "inv_parent-1", Trace: "t_x", Key: "ANY", Parent: "inv_parent", Depth: 1, Chain: "FLOW"}
	ev, err := wire.NewEvent(time.Now(), wire.TypeInvocationRequested, "owner:terminal-key", req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.log.Append(context.Background(), wire.StepSubject("ANY"), ev); err != nil {
		t.Fatal(err)
	}
	nodetestSettle(t, st)
	if _, pending, err := st.proj.Receipt("inv_parent-1"); !pending || err == nil {
		t.Fatalf("step request: pending %v, err %v; want pending", pending, err)
	}
}

// The steps' ids: derived from the parent's and the step's name, subject-token
// safe, distinct for distinct names, bounded in length.
func TestStepInvocationID(t *testing.T) {
	p := "inv_01m8p0r2r7pc3m3rw57wnz4hdv"
	seen := map[string]string{}
	for _, name := range []string{"1", "2", "3.A", "3.A.2", "3.A-2", "3.A_2", "tool-1", "tool-12", strings.Repeat("K", 250)} {
		id := dispatcher.StepInvocationID(p, name)
		if strings.ContainsAny(id, ". *>") || len(id) > 200 || !strings.HasPrefix(id, "inv_") {
			t.Errorf("%q: id %q", name, id)
		}
		if other, ok := seen[id]; ok {
			t.Errorf("%q and %q share the id %s", name, other, id)
		}
		seen[id] = name
		if id != dispatcher.StepInvocationID(p, name) {
			t.Errorf("%q: not deterministic", name)
		}
	}
	if got := dispatcher.StepInvocationID(p, "3.A"); got != p+"-3~A" {
		t.Errorf("3.A: %s", got)
	}
}

// A request from outside (the queue) cannot place itself in a call tree: a parent,
// depth or chain it claims is ignored, so it neither names a parent on its receipt
// nor trips the guards of a tree it is not in.
func TestRequestsCannotClaimALineage(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { withFlows(t)(c); c.MaxDepth = 1 })
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("SAY", "echo", `# WHAT: say`+"\n"+`["$1"]`))
	st.putRow(t, contract.Row{Key: "FLOW", Type: contract.TypeFlow, Enabled: 1, Content: "# WHAT: one step\nSAY: $1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: "FLOW", Body: "hi", Credential: "owner:terminal-key",
		Parent: "inv_someone_else", Depth: 7, Chain: "SAY>FLOW"})
	if err != nil {
		t.Fatal(err)
	}
	if !rc.OK || rc.Result != "hi" || rc.Parent != "" || len(rc.Children) != 1 {
		t.Fatalf("receipt %+v", rc)
	}
	nodetestSettle(t, st)
	step, _, err := st.proj.Receipt(rc.Children[0])
	if err != nil || step.Parent != rc.InvocationID {
		t.Fatalf("step receipt %+v (%v)", step, err)
	}
}

// A bus client knows its own invocation ids, hence its flow's step invocation ids:
// publishing something on its own subject first under the event id a step's
// request would have, were it derived from the step's invocation id alone, does
// not make the log drop the step's request as a duplicate.
func TestABusClientCannotSuppressAStepRequest(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, withFlows(t))
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("FIRST", "echo", "# WHAT: first step"))
	st.putRow(t, contract.Row{Key: "ONE_STEP", Type: contract.TypeFlow, Enabled: 1, Content: "# WHAT: one step\nFIRST: $1"})
	nc := busConn(t, st, "c1")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	req := wire.InvocationRequest{Key: "ONE_STEP", Body: "x", Token: st.mint(t, "c1", "ONE_STEP", "FIRST")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	step := dispatcher.StepInvocationID(req.InvocationID, "1")
	unkeyed := "step_" + strings.TrimPrefix(step, wire.InvocationPrefix)
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "ONE_STEP"), []byte("taken"), jetstream.WithMsgID(unkeyed)); err != nil {
		t.Fatal(err)
	}
	notices := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe(wire.ReceiptNoticeSubject("c1", "ONE_STEP", req.InvocationID), notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	data, _ := json.Marshal(ev)
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "ONE_STEP"), data); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-notices:
		var rc wire.Receipt
		got, err := wire.Decode(m.Data)
		if err != nil || got.DataAs(&rc) != nil || rc.Result != "x" || rc.Actor != "token:c1" {
			t.Fatalf("flow receipt %s: %v", m.Data, err)
		}
	case <-ctx.Done():
		t.Fatal("no receipt notice for the flow")
	}
	if n := stepRequestEvents(t, st.log, step); n != 1 {
		t.Fatalf("%d request events of step %s in the log, want 1", n, step)
	}
	if n := receiptsFor(t, st.log, step); n != 1 {
		t.Fatalf("%d receipts of step %s in the log, want 1", n, step)
	}
}

// Every call tree has one budget of steps, at every depth together: nesting
// multiplies, so the steps of flows calling flows are counted across the tree,
// and each top-level call has its own budget.
func TestStepsOfOneCallTreeAreBounded(t *testing.T) {
	for _, c := range []struct {
		max  int
		want string
	}{{5, "ERR:flow:tree_steps:6>5"}, {9, "hi"}} { // 3 INNER steps, each with 2 SAY steps: 9
		st := newStack(t)
		s := st.newService(t, func(sc *dispatcher.ServiceConfig) { withFlows(t)(sc); sc.MaxTreeSteps = c.max })
		st.run(t)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		st.putRow(t, fnRow("SAY", "echo", `# WHAT: say`+"\n"+`["$1"]`))
		st.putRow(t, contract.Row{Key: "INNER", Type: contract.TypeFlow, Enabled: 1, Content: "# WHAT: two steps\nSAY: $1 > SAY: $PREV"})
		st.putRow(t, contract.Row{Key: "OUTER", Type: contract.TypeFlow, Enabled: 1, Content: "# WHAT: three flows of two steps\nINNER: $1 > INNER: $PREV > INNER: $PREV"})
		for range 2 { // the second call has a budget of its own
			rc := invoke(t, s, "OUTER", "hi")
			if rc.Result != c.want || rc.OK != (c.want == "hi") {
				t.Fatalf("max %d: receipt %+v; want result %q", c.max, rc, c.want)
			}
		}
		s.Close()
	}
}
