package dispatcher_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
)

// InvokeWait waits for the receipt at most its wait, then hands out the
// invocation id with ErrPending; the timers its waits use go round from one
// call to the next: a wait that ended early (its receipt came) leaves nothing
// that ends the next wait before its time, and each wait ends when it should.
func TestInvokeWaitBoundsTheWaitWithoutAContext(t *testing.T) {
	st := newStack(t)
	release := make(chan struct{})
	st.fns.Register("hold", func(ctx context.Context, args []any) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "held", nil
	})
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer close(release)
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo\n[\"$1\"]"))
	st.putRow(t, fnRow("HOLD", "hold", "# WHAT: holds until released"))

	const wait = 150 * time.Millisecond
	for round := range 3 {
		// A call whose receipt comes at once: its timer is stopped and kept.
		rc, err := s.InvokeWait(context.Background(), wire.InvocationRequest{Key: "SAY", Body: "hi", Credential: wire.OwnerActor}, time.Minute)
		if err != nil || rc.Result != "hi" {
			t.Fatalf("round %d: fast call: %+v, %v", round, rc, err)
		}
		start := time.Now()
		rc, err = s.InvokeWait(context.Background(), wire.InvocationRequest{Key: "HOLD", Credential: wire.OwnerActor}, wait)
		waited := time.Since(start)
		if !errors.Is(err, dispatcher.ErrPending) || !errors.Is(err, context.DeadlineExceeded) || rc.InvocationID == "" {
			t.Fatalf("round %d: held call: %+v, %v; want its id and ErrPending", round, rc, err)
		}
		if waited < wait {
			t.Fatalf("round %d: the wait ended after %v, before its %v", round, waited, wait)
		}
	}
	// ctx still ends the wait first when it ends first.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := s.InvokeWait(ctx, wire.InvocationRequest{Key: "HOLD", Credential: wire.OwnerActor}, time.Minute)
	if !errors.Is(err, dispatcher.ErrPending) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose context is cancelled: %v, want ErrPending and context.Canceled", err)
	}
}
