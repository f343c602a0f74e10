package dispatcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// approvalStack is a running service with a sensitive PAY row and a high token.
func approvalStack(t *testing.T) (*stack, *dispatcher.Service, string) {
	t.Helper()
	st := newStack(t)
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Approvals.Sweep = 10 * time.Millisecond })
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	row := fnRow("PAY", "echo", "# WHAT: pay")
	row.Sensitive, row.InputSchema = 1, `{"type":"string"}`
	st.putRow(t, row)
	tok, _, err := st.minter.Mint(token.MintRequest{Subject: "agent-7", Scope: token.Scope{Keys: []string{"PAY"}}, Risk: token.RiskHigh, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st, s, tok
}

// hold invokes PAY as the token holder: the call is held, and Invoke returns the
// pending state, not a receipt.
func hold(t *testing.T, st *stack, s *dispatcher.Service, tok, body string) projector.Approval {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: "PAY", Body: body, Credential: wire.BearerCredential, Token: tok})
	if err != nil || rc.Status != wire.StatusPendingApproval || rc.Actor != "token:agent-7" || rc.Ran {
		t.Fatalf("held call: %+v, %v", rc, err)
	}
	a, err := s.LookupApproval(ctx, rc.InvocationID)
	if err != nil || a.Key != "PAY" || a.Decided() {
		t.Fatalf("approval of %s: %+v, %v", rc.InvocationID, a, err)
	}
	return a
}

// decideAsIfStopped appends a decision as a node would that stopped before it
// wrote the outcome (the receipt, or the approved call's re-run), at.
func decideAsIfStopped(t *testing.T, st *stack, a *projector.Approval, decision string, at time.Time) {
	t.Helper()
	ev, _ := wire.NewEvent(at, wire.TypeApprovalDecided, wire.OwnerActor, wire.ApprovalDecided{InvocationID: a.InvocationID, Decision: decision, By: wire.OwnerActor, At: at})
	if _, err := st.log.Append(context.Background(), wire.ApprovalSubject(a.InvocationID), ev, eventlog.ExpectLastSubjectSeq(a.Seq)); err != nil {
		t.Fatal(err)
	}
}

// awaitOneReceipt waits for inv's receipt and checks it is the log's only one.
func awaitOneReceipt(t *testing.T, st *stack, inv string) wire.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if err := st.proj.Settle(ctx, wire.DataStream); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.proj.Receipt(inv); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no receipt for %s", inv)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var rcs []wire.Receipt
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	err := st.log.Read(rctx, wire.DataStream, 1, func(s eventlog.Stored) error {
		var rc wire.Receipt
		if s.Type == wire.TypeReceipt && s.DataAs(&rc) == nil && rc.InvocationID == inv {
			rcs = append(rcs, rc)
		}
		return nil
	})
	if err != nil || len(rcs) != 1 {
		t.Fatalf("receipts of %s: %+v, %v; want exactly one", inv, rcs, err)
	}
	return rcs[0]
}

// A decision whose node stopped before carrying it out is mended by the sweeper:
// a denial gets its receipt, an approval its run, each exactly once.
func TestApprovalSweeperMendsADecisionLeftUndone(t *testing.T) {
	st, s, tok := approvalStack(t)
	denied := hold(t, st, s, tok, "7")
	approved := hold(t, st, s, tok, "8")
	past := time.Now().Add(-11 * time.Second)
	decideAsIfStopped(t, st, &denied, wire.DecisionDeny, past)
	decideAsIfStopped(t, st, &approved, wire.DecisionApprove, past)

	if rc := awaitOneReceipt(t, st, denied.InvocationID); rc.Status != wire.StatusRefusedApprovalDenied || rc.Body != "7" || rc.Actor != "token:agent-7" {
		t.Fatalf("denied receipt %+v", rc)
	}
	if rc := awaitOneReceipt(t, st, approved.InvocationID); rc.Status != wire.StatusProvenMaterialResult || rc.Result != "8" || rc.Actor != "token:agent-7" {
		t.Fatalf("approved receipt %+v", rc)
	}
}

// A decision through the service is refused once the approval has its decision
// or has expired, and a call that is not one never is.
func TestDecideApprovalRefusals(t *testing.T) {
	st, s, tok := approvalStack(t)
	a := hold(t, st, s, tok, "9")
	ctx := context.Background()
	if _, err := s.DecideApproval(ctx, a.InvocationID, "expire", wire.OwnerActor); !errors.Is(err, dispatcher.ErrBadDecision) {
		t.Fatalf("decision expire from the owner: %v", err)
	}
	if _, err := s.DecideApproval(ctx, "inv_nosuch", wire.DecisionDeny, wire.OwnerActor); !errors.Is(err, dispatcher.ErrApprovalUnknown) {
		t.Fatalf("unknown invocation: %v", err)
	}
	rc, err := s.DecideApproval(ctx, a.InvocationID, wire.DecisionDeny, wire.OwnerActor)
	if err != nil || rc.Status != wire.StatusRefusedApprovalDenied || rc.Result != "approval_denied" {
		t.Fatalf("deny: %+v, %v", rc, err)
	}
	if _, err := s.DecideApproval(ctx, a.InvocationID, wire.DecisionApprove, wire.OwnerActor); !errors.Is(err, dispatcher.ErrApprovalDecided) {
		t.Fatalf("approve after deny: %v", err)
	}
	awaitOneReceipt(t, st, a.InvocationID)
}

// A bus client's call held for approval is announced to it once decided, on its
// own notice subject, as any of its calls: the denial's receipt, and the approved
// re-run's (which capdir appends on its own subject, for the client).
func TestABusClientsHeldCallIsAnnouncedOnceDecided(t *testing.T) {
	st, s, tok := approvalStack(t)
	nc := busConn(t, st, "c1")
	notices := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(wire.ReceiptNotices("c1"), notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	held := func(body string) string {
		req := wire.InvocationRequest{Key: "PAY", Body: body, Token: tok}
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(ev)
		if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "PAY"), data); err != nil {
			t.Fatal(err)
		}
		for {
			if err := st.proj.Settle(ctx, wire.ControlStream); err != nil {
				t.Fatal(err)
			}
			if a, err := s.LookupApproval(ctx, req.InvocationID); err == nil && !a.Decided() {
				return req.InvocationID
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the bus client's call %s was not held", req.InvocationID)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	denied, approved := held("7"), held("8")
	if _, err := s.DecideApproval(ctx, denied, wire.DecisionDeny, wire.OwnerActor); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DecideApproval(ctx, approved, wire.DecisionApprove, wire.OwnerActor); err != nil {
		t.Fatal(err)
	}
	want := map[string]func(wire.Receipt) bool{
		wire.ReceiptNoticeSubject("c1", "PAY", denied): func(rc wire.Receipt) bool {
			return rc.Status == wire.StatusRefusedApprovalDenied && !rc.Ran && rc.InvocationID == denied
		},
		wire.ReceiptNoticeSubject("c1", "PAY", approved): func(rc wire.Receipt) bool {
			return rc.Status == wire.StatusProvenMaterialResult && rc.Result == "8" && rc.Actor == "token:agent-7" && rc.InvocationID == approved
		},
	}
	for len(want) > 0 {
		select {
		case m := <-notices:
			check, ok := want[m.Subject]
			var rc wire.Receipt
			got, err := wire.Decode(m.Data)
			if !ok || err != nil || got.DataAs(&rc) != nil || !check(rc) {
				t.Fatalf("notice on %s: %s", m.Subject, m.Data)
			}
			delete(want, m.Subject)
		case <-ctx.Done():
			t.Fatalf("no notice on %v", want)
		}
	}
}

// Calls held for approval whose requests came in one pack are each read back
// from it when approved: each runs once, with its own arguments.
func TestApprovedCallsOfOnePackRunWithTheirOwnArguments(t *testing.T) {
	st, s, tok := approvalStack(t)
	data := []byte{wire.PackFormat}
	var ids []string
	bodies := []string{"11", "12", "13"}
	for _, b := range bodies {
		req := wire.InvocationRequest{Key: "PAY", Body: b, Credential: wire.BearerCredential, Token: tok}
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := wire.Encode(&ev)
		data = wire.AppendPacked(data, wire.RequestSubject("PAY"), enc)
		ids = append(ids, req.InvocationID)
	}
	if _, err := st.log.JetStream().PublishMsg(context.Background(), &nats.Msg{Subject: wire.RequestPackSubject, Data: data}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seq uint64
	for i, id := range ids {
		var a projector.Approval
		for {
			var err error
			if a, err = s.LookupApproval(ctx, id); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("call %d never held: %v", i, err)
			case <-time.After(10 * time.Millisecond):
			}
		}
		if i > 0 && a.RequestSeq != seq {
			t.Fatalf("held requests at %d and %d: not one pack", seq, a.RequestSeq)
		}
		seq = a.RequestSeq
		if body, err := s.ApprovalBody(ctx, &a); err != nil || body != bodies[i] {
			t.Fatalf("approval %d reads its body as %q, %v; want %q", i, body, err, bodies[i])
		}
	}
	for i, id := range ids {
		if _, err := s.DecideApproval(ctx, id, wire.DecisionApprove, wire.OwnerActor); err != nil {
			t.Fatalf("approve %d: %v", i, err)
		}
		if rc := awaitOneReceipt(t, st, id); rc.Status != wire.StatusProvenMaterialResult || rc.Result != bodies[i] {
			t.Fatalf("approved call %d: %+v", i, rc)
		}
	}
}
