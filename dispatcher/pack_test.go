package dispatcher_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// appendRequestPack appends, as capdir's facade packs them, one message on the
// request pack subject carrying a request of key for each body, and returns
// their invocation ids.
func appendRequestPack(t *testing.T, st *stack, key string, bodies ...string) []string {
	t.Helper()
	data := []byte{wire.PackFormat}
	var ids []string
	for _, b := range bodies {
		req := wire.InvocationRequest{Key: key, Body: b, Credential: wire.OwnerActor}
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := wire.Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		data = wire.AppendPacked(data, wire.RequestSubject(key), enc)
		ids = append(ids, req.InvocationID)
	}
	if _, err := st.log.JetStream().PublishMsg(context.Background(), &nats.Msg{Subject: wire.RequestPackSubject, Data: data}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// logCounts are the requests and receipts the data stream holds per
// invocation id, and on which subject each receipt's message is.
func logCounts(t *testing.T, l *eventlog.Log) (requests, receipts map[string]int, receiptPacked map[string]bool) {
	t.Helper()
	requests, receipts, receiptPacked = map[string]int{}, map[string]int{}, map[string]bool{}
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		switch s.Type {
		case wire.TypeInvocationRequested:
			var r wire.InvocationRequest
			if err := s.DataAs(&r); err != nil {
				return err
			}
			requests[r.InvocationID]++
		case wire.TypeReceipt:
			var r wire.Receipt
			if err := s.DataAs(&r); err != nil {
				return err
			}
			receipts[r.InvocationID]++
			receiptPacked[r.InvocationID] = s.Parts > 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return requests, receipts, receiptPacked
}

// The requests of a pack are each run once, as the owner's (capdir wrote them
// on its own request subject), each to its own receipt.
func TestAPackOfRequestsRunsEachOnce(t *testing.T) {
	st := newStack(t)
	var runs sync.Map
	st.fns.Register("count", func(_ context.Context, args []any) (string, error) {
		n, _ := runs.LoadOrStore(fmt.Sprint(args...), new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return "ran " + fmt.Sprint(args...), nil
	})
	s := st.newService(t, nil)
	st.run(t)
	st.putRow(t, fnRow("COUNT", "count", "# WHAT: count runs"))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bodies := []string{"b0", "b1", "b2", "b3", "b4"}
	ids := appendRequestPack(t, st, "COUNT", bodies...)
	for i, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t0 := time.Now()
		rc, err := s.Await(ctx, id)
		defer cancel()
		if ctx.Err() != nil {
			t.Fatalf("%s: Await returned only when its context ended (after %s): a receipt read before the wait began woke nothing", id, time.Since(t0))
		}
		if err != nil || !rc.OK || rc.Result != "ran "+bodies[i] || rc.Actor != wire.OwnerActor {
			t.Fatalf("%s: %+v, %v", id, rc, err)
		}
	}
	requests, receipts, _ := logCounts(t, st.log)
	for i, id := range ids {
		n, _ := runs.Load(bodies[i])
		if requests[id] != 1 || receipts[id] != 1 || n.(*atomic.Int32).Load() != 1 {
			t.Fatalf("%s: %d requests, %d receipts, %d runs; want 1 each", id, requests[id], receipts[id], n.(*atomic.Int32).Load())
		}
	}
}

// A pack one of whose requests a worker abandoned before its receipt (a crash
// there) is delivered again whole after the ack wait: the requests with a
// receipt are not run again, the abandoned one runs once more, and its
// receipt, of a delivery that is not the first, goes alone under its own id.
func TestAPackDeliveredAgainRunsOnlyWhatHadNoReceipt(t *testing.T) {
	st := newStack(t)
	var runs sync.Map
	st.fns.Register("count", func(_ context.Context, args []any) (string, error) {
		n, _ := runs.LoadOrStore(fmt.Sprint(args...), new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return "ran", nil
	})
	var crashed atomic.Bool
	crash := func(req *wire.InvocationRequest) error {
		if req.Body == "b2" && crashed.CompareAndSwap(false, true) {
			return errCrash
		}
		return nil
	}
	s := st.newService(t, func(c *dispatcher.ServiceConfig) {
		c.AckWait = 500 * time.Millisecond
		dispatcher.SetFailpoints(c, crash, nil)
	})
	st.run(t)
	st.putRow(t, fnRow("COUNT", "count", "# WHAT: count runs"))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bodies := []string{"b0", "b1", "b2", "b3", "b4"}
	ids := appendRequestPack(t, st, "COUNT", bodies...)
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rc, err := s.Await(ctx, id)
		cancel()
		if err != nil || !rc.OK {
			t.Fatalf("%s: %+v, %v", id, rc, err)
		}
	}
	time.Sleep(time.Second) // any further delivery plays out
	if !crashed.Load() {
		t.Fatal("the failpoint never fired")
	}
	requests, receipts, packed := logCounts(t, st.log)
	for i, id := range ids {
		want := int32(1)
		if bodies[i] == "b2" {
			want = 2
		}
		n, _ := runs.Load(bodies[i])
		if requests[id] != 1 || receipts[id] != 1 || n.(*atomic.Int32).Load() != want {
			t.Fatalf("%s (%s): %d requests, %d receipts, %d runs; want 1, 1, %d", id, bodies[i], requests[id], receipts[id], n.(*atomic.Int32).Load(), want)
		}
	}
	if packed[ids[2]] {
		t.Fatal("the receipt of a request delivered again was packed: the log's duplicate detection would not know it")
	}
}

// Calls finishing together have their receipts packed, and each invocation
// still has exactly one request and one receipt in the log.
func TestReceiptsFinishingTogetherArePacked(t *testing.T) {
	st := newStack(t)
	const calls = 32
	var started sync.WaitGroup
	started.Add(calls)
	release := make(chan struct{})
	st.fns.Register("gather", func(ctx context.Context, args []any) (string, error) {
		started.Done()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "done", nil
	})
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Workers = calls })
	st.run(t)
	st.putRow(t, fnRow("GATHER", "gather", "# WHAT: wait for the others"))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	got := make(chan wire.Receipt, calls)
	for i := range calls {
		wg.Go(func() { got <- invoke(t, s, "GATHER", fmt.Sprint(i)) })
	}
	started.Wait()
	close(release)
	wg.Wait()
	close(got)
	requests, receipts, packed := logCounts(t, st.log)
	n := 0
	for rc := range got {
		if !rc.OK || requests[rc.InvocationID] != 1 || receipts[rc.InvocationID] != 1 {
			t.Fatalf("%s: ok %v, %d requests, %d receipts in the log", rc.InvocationID, rc.OK, requests[rc.InvocationID], receipts[rc.InvocationID])
		}
		if packed[rc.InvocationID] {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("none of %d receipts finishing together was packed", calls)
	}
	t.Logf("%d of %d receipts packed", n, calls)
}
