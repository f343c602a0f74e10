package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go/jetstream"
)

// handle runs one request message: the gate, the runner, the receipt, the ack. A
// request whose receipt already exists (a redelivery after the receipt was written)
// is acknowledged without running again.
func (s *Service) handle(ctx context.Context, m jetstream.Msg) {
	req, from, err := decodeRequest(m)
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: unusable request dropped", "subject", m.Subject(), "err", err)
		m.Term()
		return
	}
	// The row is read only after this node has projected the directory as far as
	// the requesting node had: a row is callable as soon as its write returns.
	if req.DirSeq > 0 && s.cfg.Projector.Applied(eventlog.ControlStream) < req.DirSeq {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s.cfg.Projector.WaitFor(wctx, eventlog.ControlStream, req.DirSeq)
		cancel()
	}
	// A redelivered request may already have its receipt (the worker before this
	// one appended it and stopped before the ack): then it is not run again. So may
	// a first delivery that waited so long that it may have been redelivered
	// meanwhile. The projection is settled first, so a receipt appended anywhere
	// before this delivery is seen. A fresh first delivery has none; were another
	// request event to carry the same invocation id, the receipt's event id,
	// derived from it, keeps the log to one.
	md, mdErr := m.Metadata()
	checkReceipt := ""
	if mdErr != nil || md.NumDelivered > 1 || time.Since(md.Timestamp) > s.cfg.AckWait/2 {
		checkReceipt = req.InvocationID
		m.InProgress()
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := s.cfg.Projector.Settle(sctx, eventlog.DataStream); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("dispatcher: redelivered request checked against a lagging projection", "invocation", req.InvocationID, "err", err)
		}
		cancel()
	} else if from.client != "" {
		// A bus client chooses its invocation ids: one that already has a
		// receipt is not run again (the projection's view; no wait).
		checkReceipt = req.InvocationID
	}
	g := s.cfg.Projector.Gate(req.Key, checkReceipt)
	if errors.Is(g.RowErr, projector.ErrNotFound) {
		g = s.catchUpRow(ctx, &req, checkReceipt, g)
	}
	in := gate.Input{Req: &req, NotFound: errors.Is(g.RowErr, projector.ErrNotFound), RowErr: g.RowErr, Fingerprint: g.Fingerprint, Owner: from.owner}
	if g.RowErr == nil {
		in.Row = &g.Row
	}
	if g.RowErr == nil && !g.HasReceipt && gate.CanStrike(&g.Row) {
		// A breaker is a fold over the data stream, and this node's projection may
		// lag the node that appended the request. For a row that can strike, wait
		// until everything appended before the request (the receipt that tripped
		// the breaker, an owner reset) is folded here, so the gate refuses every
		// request appended after the trip. Other rows have no breaker to wait for.
		if mdErr == nil && md.Sequence.Stream > 1 && s.cfg.Projector.Applied(wire.DataStream) < md.Sequence.Stream-1 {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			s.cfg.Projector.WaitFor(wctx, wire.DataStream, md.Sequence.Stream-1)
			cancel()
		}
		in.Breaker, in.BreakerErr = s.cfg.Projector.Breaker(req.Key)
	}
	if g.HasReceipt {
		m.Ack()
		return
	}
	started := s.cfg.Clock()
	d := newDraft(&req, from.actor, s.cfg.Name, started)
	s.run(ctx, &req, d, &in)
	if s.cfg.beforeReceipt != nil {
		if err := s.cfg.beforeReceipt(&req); err != nil {
			return // abandoned unacknowledged: JetStream redelivers after AckWait
		}
	}
	rc := d.finish(s.cfg.Clock(), s.cfg.ResultCap, s.receiptBudget)
	if err := s.appendReceipt(ctx, &rc, from.client); err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Error("dispatcher: receipt not appended; request will be redelivered", "invocation", req.InvocationID, "err", err)
			m.NakWithDelay(time.Second)
		}
		return
	}
	// The receipt is in the log: count it before a caller of this process waiting
	// for it is woken (it need not wait for the projection too), so a scrape after
	// the caller's answer sees it.
	s.cfg.Metrics.receipt(&rc)
	s.waiters.deliver(&rc)
	if s.cfg.beforeAck != nil {
		if err := s.cfg.beforeAck(&req); err != nil {
			return
		}
	}
	m.Ack()
}

// heldSlot is the request one worker holds, and since when.
type heldSlot struct {
	mu    sync.Mutex
	m     jetstream.Msg
	since time.Time
}

func (h *heldSlot) hold(m jetstream.Msg) {
	h.mu.Lock()
	h.m, h.since = m, time.Now()
	h.mu.Unlock()
}

// keepInProgress tells JetStream, every interval until ctx ends, that each request
// a worker has held for at least an interval is still in progress, so a slow call
// is not redelivered to another worker and run twice. With interval a third of
// AckWait, a held request hears from it within two thirds of AckWait. One goroutine
// serves every worker: a fast call costs two uncontended locks, not a timer.
func keepInProgress(ctx context.Context, held []heldSlot, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for i := range held {
				h := &held[i]
				h.mu.Lock()
				if h.m != nil && now.Sub(h.since) >= interval {
					h.m.InProgress()
				}
				h.mu.Unlock()
			}
		}
	}
}

// run passes the request through the gate and, if admitted, the runner, filling d.
// in holds the projection reads for the request, after the waits in handle.
func (s *Service) run(ctx context.Context, req *wire.InvocationRequest, d *draft, in *gate.Input) {
	a, refusal := s.gate.Check(in)
	if a.Row != nil {
		d.row(a.Row, a.Fingerprint)
	}
	if refusal != nil {
		d.refuse(refusal.Status, refusal.Reason, refusal.Extra)
		return
	}
	d.BreakerGeneration = a.BreakerGeneration
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
	defer cancel()
	o := s.cfg.Runners.Run(rctx, runner.Call{Row: a.Row, Body: req.Body, Shape: req.Shape})
	d.outcome(o, req.Shape)
}

// catchUpRow handles a key this node's projection does not have. The requesting
// node may have been behind the node that wrote the row, so ask the log for the
// key's last mutation: if this projection has not applied it yet, wait and read
// again. Only a miss pays for the lookup.
func (s *Service) catchUpRow(ctx context.Context, req *eventlog.InvocationRequest, checkReceipt string, g projector.GateView) projector.GateView {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	seq, err := s.cfg.Log.LastSubjectSeq(lctx, eventlog.ControlStream, eventlog.DirectorySubject(req.Key))
	if err != nil || seq == 0 || seq <= s.cfg.Projector.Applied(eventlog.ControlStream) {
		return g
	}
	if err := s.cfg.Projector.WaitFor(lctx, eventlog.ControlStream, seq); err != nil {
		return g
	}
	return s.cfg.Projector.Gate(req.Key, checkReceipt)
}

// BreakerDecision is the decision the gate would make now for st: the cooldown and
// a replaced credential both close it. A breaker whose row is gone is checked
// without a credential.
func (s *Service) BreakerDecision(st breaker.State) breaker.Decision {
	auth := ""
	if row, _, err := s.cfg.Projector.Row(st.Key); err == nil {
		auth = row.Auth
	}
	return s.gate.Decide(st, auth)
}

// appendReceipt appends the receipt under an event id derived from the invocation
// id, so a duplicate receipt inside the log's duplicate window is not stored, and
// once it is stored announces it on the notice subject of the bus client that
// requested it (none for capdir's own requests: their callers wait in-process).
func (s *Service) appendReceipt(ctx context.Context, rc *eventlog.Receipt, client string) error {
	ev, err := eventlog.NewEventAt(rc.FinishedAt, eventlog.TypeReceipt, "engine:"+s.cfg.Name, rc)
	if err != nil {
		return err
	}
	fresh := ev.ID
	ev.ID = receiptEventID(rc.InvocationID)
	f, err := s.appendAwait(ctx, rc.Key, ev)
	if errors.Is(err, eventlog.ErrIDTaken) {
		// A bus client knows its invocation ids, so it can publish something
		// under this receipt's event id first: the receipt goes in under a fresh
		// id rather than not at all.
		s.cfg.Logger.Warn("dispatcher: a receipt's event id was taken; appended under another", "invocation", rc.InvocationID, "err", err)
		ev.ID = fresh
		f, err = s.appendAwait(ctx, rc.Key, ev)
	}
	if err != nil {
		return err
	}
	// In the log: now tell a bus client waiting for it. A notice that does not go
	// out loses nothing; the receipt is in the log.
	if client == "" {
		return nil
	}
	if err := s.cfg.Log.Notify(wire.ReceiptNoticeSubject(client, rc.Key, rc.InvocationID), f); err != nil {
		s.cfg.Logger.Warn("dispatcher: receipt notice not published", "invocation", rc.InvocationID, "err", err)
	}
	return nil
}

// appendAwait appends a receipt and waits until it is in the log.
func (s *Service) appendAwait(ctx context.Context, key string, ev eventlog.Event) (jetstream.PubAckFuture, error) {
	f, err := s.cfg.Log.AppendAsync(eventlog.ReceiptSubject(key), ev)
	if err != nil {
		return nil, err
	}
	_, err = s.cfg.Log.AwaitAppendedWithin(ctx, f, receiptAckWait)
	return f, err
}

// receiptAckWait bounds the wait for the log to acknowledge a receipt.
const receiptAckWait = 10 * time.Second

// sender is who appended a request, as its subject says (wire.ParseRequestSubject).
type sender struct {
	// client is the bus client's name; "" for capdir's own request subject.
	client string
	// actor is who the receipt names: the bus client, or the credential capdir
	// attested on its own subject.
	actor string
	// owner: capdir attests the owner's credential (gate.Input.Owner). Only on
	// capdir's own subject, which only capdir's connections may publish on.
	owner bool
}

// decodeRequest reads a request message and who sent it. capdir's own requests
// (wire.RequestSubject) are believed: their credential is capdir's attestation. A
// bus client's (wire.BusRequestSubject) is never the owner's, whatever its body
// claims: its actor is the client the subject names, and its body's credential and
// directory position are not kept. Bus clients may leave the invocation id, trace
// and key empty: they are derived from the event id and the subject.
func decodeRequest(m jetstream.Msg) (eventlog.InvocationRequest, sender, error) {
	var req eventlog.InvocationRequest
	origin, ok := wire.ParseRequestSubject(m.Subject())
	if !ok {
		return req, sender{}, fmt.Errorf("subject %s is not capdir.data.req.<KEY> nor capdir.data.bus.<CLIENT>.<KEY>", m.Subject())
	}
	ev, err := eventlog.DecodeShared(m.Data())
	if err != nil {
		return req, sender{}, err
	}
	if ev.Type != eventlog.TypeInvocationRequested {
		return req, sender{}, fmt.Errorf("event type %q on a request subject", ev.Type)
	}
	if err := ev.DataAs(&req); err != nil {
		return req, sender{}, err
	}
	if req.Key == "" {
		req.Key = origin.Key
	}
	if req.Key != origin.Key {
		return req, sender{}, fmt.Errorf("key %q does not match subject %s", req.Key, m.Subject())
	}
	if req.InvocationID == "" {
		req.InvocationID = eventlog.RequestInvocationID(ev.ID)
	}
	if req.Trace == "" {
		req.Trace = wire.NewTrace()
	}
	if origin.Client != "" {
		actor := wire.ClientActor(origin.Client)
		req.Credential = actor
		req.DirSeq = 0 // a client cannot know it; a claimed one would only hold a worker
		return req, sender{client: origin.Client, actor: actor}, nil
	}
	actor := req.Credential
	if actor == "" {
		actor = ev.Actor
	}
	if actor == "" {
		actor = "nats:anonymous"
	}
	return req, sender{actor: actor, owner: req.Credential == wire.OwnerActor}, nil
}
