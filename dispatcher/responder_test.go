package dispatcher_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/nats-io/nats.go"
	"github.com/oklog/ulid/v2"
)

// A call to a sensitive row is answered at once with the pending state; the owner
// decides; the call sent again under its invocation id gets the approved run's
// receipt, and the log holds that one receipt.
func TestABusCallHeldForApprovalIsSentAgainForItsOutcome(t *testing.T) {
	st, s, tok := approvalStack(t)
	nc := busConn(t, st, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := wire.Call(ctx, nc, "c1", "PAY", "8", wire.WithToken(tok))
	if err != nil || rc.Status != wire.StatusPendingApproval {
		t.Fatalf("a call to a sensitive row: %+v, %v; want %s at once", rc.ReceiptSummary, err, wire.StatusPendingApproval)
	}
	if _, err := s.DecideApproval(ctx, rc.InvocationID, wire.DecisionApprove, wire.OwnerActor); err != nil {
		t.Fatal(err)
	}
	again, err := wire.Call(ctx, nc, "c1", "PAY", "8", wire.WithToken(tok), wire.WithInvocationID(rc.InvocationID))
	if err != nil || again.InvocationID != rc.InvocationID || again.Status != wire.StatusProvenMaterialResult || again.Result != "8" || again.Actor != "token:agent-7" {
		t.Fatalf("sent again once approved: %+v %q, %v", again.ReceiptSummary, again.Result, err)
	}
	if rcs := nodetest.Receipts(t, st.log, rc.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}

// A call whose request the log refuses for its size once encoded again (an
// envelope written with spaces, whose body's '<' encoding/json escapes to six
// bytes) is refused as too large, as one refused at the door is: retry false,
// nothing appended.
func TestBusCallTooLargeOnceEncodedIsNotRetried(t *testing.T) {
	st, nc := sayOverTheBus(t, func(c *dispatcher.ServiceConfig) { c.MaxPayload = 2 << 20 })
	body := strings.Repeat("<", 3<<19) // 9 MiB once escaped: over the log's 8 MiB
	id := ulid.Make().String()
	data := fmt.Sprintf(`{"id": %q, "type": %q, "at": %q, "actor": "nats:c1", "data": {"key": "SAY", "body": %q}}`,
		id, wire.TypeInvocationRequested, time.Now().UTC().Format(time.RFC3339), body)
	before := dataMsgs(t, st)
	m, err := nc.Request(wire.CallSubject("c1", "SAY"), []byte(data), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := wire.Decode(m.Data)
	var r wire.CallRefused
	if err != nil || reply.Type != wire.TypeCallRefused || reply.DataAs(&r) != nil {
		t.Fatalf("reply %.200s, %v", m.Data, err)
	}
	if r.Retry || !strings.HasPrefix(r.Error, "payload_too_large: the request is over") || r.InvocationID != wire.RequestInvocationID(id) {
		t.Fatalf("refusal %+v; want payload_too_large, retry false", r)
	}
	if after := dataMsgs(t, st); after != before {
		t.Fatalf("the data stream went from %d to %d messages", before, after)
	}
}

// dataMsgs is how many messages the data stream holds.
func dataMsgs(t *testing.T, st *stack) uint64 {
	t.Helper()
	str, err := st.log.JetStream().Stream(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := str.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A node answers its bus calls on answerers it keeps from one call to the
// next, not on a goroutine started for each (which grew its stack at every
// call); an answerer left without a call ends, and so does every answerer when
// the service stops.
func TestBusCallsAreAnsweredByKeptAnswerers(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo"))
	tok, _, err := st.minter.Mint(token.MintRequest{Subject: "agent-7", Scope: token.Scope{Keys: []string{"SAY"}}, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	nc := busConn(t, st, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const calls = 40
	for i := range calls {
		rc, err := wire.Call(ctx, nc, "c1", "SAY", fmt.Sprint(i), wire.WithToken(tok))
		if err != nil || rc.Result != fmt.Sprint(i) {
			t.Fatalf("call %d: %q, %v", i, rc.Result, err)
		}
	}
	// A call may come in before the answerer of the one before is back
	// waiting (its reply went out first): then another starts. Not one a call.
	if _, started := dispatcher.Answerers(s); started > calls/2 {
		t.Fatalf("%d answerers started for %d calls one after the other", started, calls)
	}
	deadline := time.Now().Add(10 * time.Second)
	for running, _ := dispatcher.Answerers(s); running > 0; running, _ = dispatcher.Answerers(s) {
		if time.Now().After(deadline) {
			t.Fatalf("%d answerers still run 10 s after the last call", running)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Calls at once, then the service stopped while their answerers wait (for a
	// minute): the stop ends them.
	defer dispatcher.SetAnswererIdle(time.Minute)()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			rc, err := wire.Call(ctx, nc, "c1", "SAY", fmt.Sprint(i), wire.WithToken(tok))
			if err == nil && rc.Result != fmt.Sprint(i) {
				err = fmt.Errorf("call %d answered %q", i, rc.Result)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if running, _ := dispatcher.Answerers(s); running == 0 {
		t.Fatal("no answerer waits after calls at once")
	}
	closed = true
	start := time.Now()
	s.Close()
	if running, _ := dispatcher.Answerers(s); running != 0 {
		t.Fatalf("%d answerers run after the service stopped", running)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("the stop took %s: it waited for its answerers' idle time", el)
	}
}

// A call's reply is its receipt's event: the event id the log stores it under
// (a client that also reads the log, or the notice subject, tells the two
// apart by nothing), and the same receipt.
func TestBusCallReplyIsTheReceiptsEvent(t *testing.T) {
	st, nc := sayOverTheBus(t, nil)
	req := wire.InvocationRequest{Key: "SAY", Body: "hi", Token: st.mint(t, "agent-7", "SAY"), Credential: wire.ClientActor("c1")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Request(wire.CallSubject("c1", "SAY"), data, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := wire.Decode(m.Data)
	var rc wire.Receipt
	if err != nil || reply.Type != wire.TypeReceipt || reply.DataAs(&rc) != nil || rc.Result != "hi" {
		t.Fatalf("reply %.300s, %v", m.Data, err)
	}
	var stored []eventlog.Stored
	if err := st.log.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		if s.Type == wire.TypeReceipt {
			stored = append(stored, s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 {
		t.Fatalf("%d receipts in the log, want 1", len(stored))
	}
	var logged wire.Receipt
	if err := stored[0].DataAs(&logged); err != nil {
		t.Fatal(err)
	}
	if reply.ID != stored[0].ID || logged.InvocationID != rc.InvocationID || logged.Result != rc.Result || logged.Fingerprints != rc.Fingerprints {
		t.Fatalf("reply %s %+v; the log's receipt %s %+v", reply.ID, rc.ReceiptSummary, stored[0].ID, logged.ReceiptSummary)
	}
	if reply.Actor != "engine:w" {
		t.Fatalf("reply's actor %q, want engine:w", reply.Actor)
	}
}

// sayOverTheBus starts a service (mutate, when not nil, sets its config) over a
// stack holding the fn row SAY (echo), and connects bus client c1.
func sayOverTheBus(t *testing.T, mutate func(*dispatcher.ServiceConfig)) (*stack, *nats.Conn) {
	t.Helper()
	st := newStack(t)
	s := st.newService(t, mutate)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo"))
	return st, busConn(t, st, "c1")
}
