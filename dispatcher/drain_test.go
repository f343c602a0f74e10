package dispatcher_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
)

type invoked struct {
	rc  wire.Receipt
	err error
}

// invokeAsync invokes key on s in a goroutine; the answer arrives on the channel.
func invokeAsync(t *testing.T, s *dispatcher.Service, key, body string) <-chan invoked {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	ch := make(chan invoked, 1)
	go func() {
		rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: key, Body: body, Credential: "owner:terminal-key"})
		ch <- invoked{rc, err}
	}()
	return ch
}

// gatedFn registers name: its calls record their body on started and wait for
// release (or their context); after release every call returns at once.
func gatedFn(st *stack, name string) (started chan string, release chan struct{}, runs *atomic.Int32) {
	started, release, runs = make(chan string, 16), make(chan struct{}), new(atomic.Int32)
	st.fns.Register(name, func(ctx context.Context, args []any) (string, error) {
		runs.Add(1)
		body, _ := args[0].(string)
		started <- body
		select {
		case <-release:
			return "done:" + body, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	return started, release, runs
}

// Drain lets the call in flight finish and write its receipt; a request delivered
// behind it is not started but given back, and the next service runs it.
func TestDrainFinishesCallsInFlightAndGivesBackTheRest(t *testing.T) {
	st := newStack(t)
	started, release, runs := gatedFn(st, "gated")
	one := func(name string) func(*dispatcher.ServiceConfig) {
		return func(c *dispatcher.ServiceConfig) { c.Workers = 1; c.Name = name }
	}
	a := st.newService(t, one("a"))
	st.run(t)
	st.putRow(t, fnRow("GATED", "gated", `# WHAT: waits for the test`+"\n"+`["$1"]`))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	first := invokeAsync(t, a, "GATED", "first")
	if b := <-started; b != "first" {
		t.Fatalf("started %q", b)
	}
	second := invokeAsync(t, a, "GATED", "second") // waits behind the first: one worker

	drained := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		drained <- a.Drain(ctx)
	}()
	<-dispatcher.Draining(a)
	close(release)
	if err := <-drained; err != nil {
		t.Fatalf("drain: %v", err)
	}
	r := <-first
	if r.err != nil || r.rc.Status != wire.StatusProvenMaterialResult || r.rc.Result != "done:first" || r.rc.Worker != "a" {
		t.Fatalf("the call in flight: %+v, %v", r.rc, r.err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d calls ran on the draining service, want only the one in flight", n)
	}
	// Stop and Drain after a drain are no-ops.
	a.Close()
	if err := a.Drain(context.Background()); err != nil {
		t.Fatalf("a second drain: %v", err)
	}

	b := st.newService(t, one("b"))
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r = <-second
	if r.err != nil || r.rc.Result != "done:second" || r.rc.Worker != "b" {
		t.Fatalf("the request given back: %+v, %v", r.rc, r.err)
	}
	for _, inv := range []string{r.rc.InvocationID} {
		if n := receiptsFor(t, st.log, inv); n != 1 {
			t.Fatalf("%d receipts for %s", n, inv)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
}

// A drain whose context ends with a call in flight cancels it: no receipt, an
// error matching ErrDrainCut and the deadline, and the request runs again on the
// next service. A Stop during a drain cuts it short the same way.
func TestDrainPastItsDeadlineCancelsAndRedelivers(t *testing.T) {
	for _, how := range []string{"deadline", "stop during drain"} {
		t.Run(how, func(t *testing.T) {
			st := newStack(t)
			started, release, runs := gatedFn(st, "gated")
			a := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Name = "a"; c.AckWait = time.Second })
			st.run(t)
			st.putRow(t, fnRow("GATED", "gated", `# WHAT: waits for the test`+"\n"+`["$1"]`))
			if err := a.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := invokeAsync(t, a, "GATED", "x")
			<-started

			var err error
			start := time.Now()
			if how == "deadline" {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				err = a.Drain(ctx)
				cancel()
			} else {
				drained := make(chan error, 1)
				go func() { drained <- a.Drain(context.Background()) }()
				<-dispatcher.Draining(a)
				a.Close()
				err = <-drained
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("drain cut by Stop: %v, want context.Canceled", err)
				}
			}
			if !errors.Is(err, dispatcher.ErrDrainCut) || how == "deadline" && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("drain: %v", err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("drain took %v", el)
			}
			if again := a.Drain(context.Background()); again == nil || again.Error() != err.Error() {
				t.Fatalf("a later Drain returned %v, want the first one's %v", again, err)
			}
			a.Close()

			close(release)
			b := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Name = "b"; c.AckWait = time.Second })
			if err := b.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			r := <-got
			if r.err != nil || r.rc.Status != wire.StatusProvenMaterialResult || r.rc.Worker != "b" {
				t.Fatalf("redelivered call: %+v, %v", r.rc, r.err)
			}
			if n := receiptsFor(t, st.log, r.rc.InvocationID); n != 1 {
				t.Fatalf("%d receipts, want 1 (none for the cancelled call)", n)
			}
			if n := runs.Load(); n != 2 {
				t.Fatalf("%d runs, want the cancelled one and the rerun", n)
			}
		})
	}
}
