package projector_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Whether an invocation id has a request before a sequence is answered once
// the follower has read that far, while the batch holding what it read has not
// committed; a request under the id in that batch makes the caller wait for
// the commit, and once it is in, the answer is that request.
func TestInvocationBeforeAnswersWithoutACommit(t *testing.T) {
	l := logtest.Open(t, "")
	gate := make(chan struct{})
	var hold atomic.Bool
	cfg := projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l}
	projector.SetBeforeCommit(&cfg, func(stream string, _ []eventlog.Stored) error {
		if stream == wire.DataStream && hold.Load() {
			<-gate
		}
		return nil
	})
	p, err := projector.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	released := false
	t.Cleanup(func() {
		if !released {
			close(gate)
		}
		cancel()
		<-done
	})
	request := func(inv string) uint64 {
		return appendEv(t, l, wire.RequestSubject("K"), t0, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: "K", Body: "x"})
	}
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if err := p.WaitFor(wctx, wire.DataStream, request("inv_first")); err != nil {
		t.Fatal(err)
	}
	hold.Store(true) // no data-stream batch commits from here until gate closes
	a, b, c := request("inv_x"), request("inv_y"), request("inv_x")

	before := func(inv string, seq uint64) (projector.Invocation, bool, error) {
		t.Helper()
		return p.InvocationBefore(wctx, inv, seq)
	}
	if _, known, err := before("inv_z", c+1); !known || !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("an id without requests, before %d: known %v, err %v; want known, not found", c+1, known, err)
	}
	if _, known, err := before("inv_y", b); !known || !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("inv_y before its own request: known %v, err %v; want known, not found", known, err)
	}
	if inv, known, err := before("inv_first", c+1); !known || err != nil || inv.Seq == 0 || inv.Seq >= a {
		t.Fatalf("a committed id: %+v, known %v, err %v", inv, known, err)
	}
	if _, known, _ := before("inv_x", c); known {
		t.Fatalf("inv_x before %d is known while its request at %d has not committed", c, a)
	}
	// InvocationNow reads the log's last sequence itself.
	if _, known, err := p.InvocationNow(wctx, "inv_z"); !known || !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("InvocationNow of an id without requests: known %v, err %v; want known, not found, without a commit", known, err)
	}
	if _, known, _ := p.InvocationNow(wctx, "inv_y"); known {
		t.Fatalf("InvocationNow of inv_y is known while its request at %d has not committed", b)
	}
	if applied := p.Applied(wire.DataStream); applied >= a {
		t.Fatalf("applied %d: the batch holding %d committed while held", applied, a)
	}
	close(gate)
	released = true
	if err := p.WaitFor(wctx, wire.DataStream, c); err != nil {
		t.Fatal(err)
	}
	if inv, known, err := before("inv_x", c); !known || err != nil || inv.Seq != a {
		t.Fatalf("inv_x before %d once committed: %+v, known %v, err %v; want its request at %d", c, inv, known, err, a)
	}
}
