package dispatcher

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A copy of a bus call stored right after the first copy's receipt, while the
// projector has read that receipt and not yet committed it, is answered with
// it: the receipt was handed to the waits of its time, before this copy's
// began, so the projection is the only place left to find it, once it has
// folded everything before the copy.
func TestCallEarlierFindsAReceiptReadAndNotCommitted(t *testing.T) {
	fns := fnrunner.NewRegistry()
	fns.Register("say", func(context.Context, []any) (string, error) { return "said", nil })
	st := newInternalStack(t, Settings{Workers: 1}, fns, contract.Row{Key: "SAY", Type: "fn", Target: "say", Enabled: 1})
	s, l, p := st.s, st.log, st.proj
	// The follower is held on the receipt once it has read it: before its
	// batch commits.
	var holding atomic.Bool
	seen, release := make(chan struct{}), make(chan struct{})
	p.OnSeen(func(stream string, s *eventlog.Stored) {
		if stream == wire.DataStream && s.Type == wire.TypeReceipt && holding.CompareAndSwap(true, false) {
			close(seen)
			<-release
		}
	})
	released := false
	t.Cleanup(func() { // before the stack's projector stops: its follower may be held
		if !released {
			close(release)
		}
	})
	ctx := context.Background()
	tok, _, err := st.minter.Mint(token.MintRequest{Subject: "agent-1", Scope: token.Scope{Keys: []string{"SAY"}}, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	// The client's envelope, stored once and run: its receipt follows it.
	sent := wire.InvocationRequest{Key: "SAY", Body: "x", Token: tok, Credential: wire.ClientActor("c1")}
	ev, err := wire.PrepareRequest(time.Now(), &sent)
	if err != nil {
		t.Fatal(err)
	}
	subject := wire.BusRequestSubject("c1", "SAY")
	req, _, err := requestOf(wire.ParseSubject(subject), subject, &ev)
	if err != nil {
		t.Fatal(err)
	}
	first, err := l.Append(ctx, subject, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(ctx, wire.DataStream, first); err != nil {
		t.Fatal(err)
	}
	data, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	holding.Store(true)
	s.handle(ctx, &heldMsg{subject: subject, data: data, delivered: 1, stored: time.Now()})
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		t.Fatal("the receipt was not read")
	}
	rcSeq := p.Read(wire.DataStream)
	if rcSeq <= first || p.Applied(wire.DataStream) >= rcSeq {
		t.Fatalf("receipt read at %d, applied %d: want it read after the request at %d and not committed", rcSeq, p.Applied(wire.DataStream), first)
	}

	// The copy sent again, stored next.
	type answer struct {
		typ  string
		data any
	}
	got := make(chan answer, 1)
	go func() {
		again := req
		typ, data := s.callEarlier(ctx, &again, "c1", rcSeq+1)
		got <- answer{typ, data}
	}()
	select {
	case a := <-got:
		t.Fatalf("answered while the receipt before it was not yet committed: %q %+v; want its receipt", a.typ, a.data)
	case <-time.After(300 * time.Millisecond): // waiting for the fold, as it should
	}
	close(release)
	released = true
	a := <-got
	rc, ok := a.data.(*wire.Receipt)
	if a.typ != wire.TypeReceipt || !ok || rc.InvocationID != req.InvocationID || rc.Result != "said" {
		t.Fatalf("the copy sent again: %q %+v; want the receipt of %s", a.typ, a.data, req.InvocationID)
	}
}
