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
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
)

// handle runs one request message: the gate, the runner, the receipt, the ack. A
// request whose receipt already exists (a redelivery after the receipt was written)
// is acknowledged without running again.
func (s *Service) handle(ctx context.Context, m eventlog.Msg) {
	req, from, err := decodeRequest(m)
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: unusable request dropped", "subject", m.Subject(), "err", err)
		m.Term()
		return
	}
	ctx, sp := s.traceWorker(ctx, m, &req)
	defer sp.End()
	// The row is read only after this node has projected the directory as far as
	// the requesting node had: a row is callable as soon as its write returns.
	if req.DirSeq > 0 && s.cfg.Projector.Applied(wire.ControlStream) < req.DirSeq {
		wctx, cancel := s.cfg.Projector.WaitContext(ctx)
		s.cfg.Projector.WaitFor(wctx, wire.ControlStream, req.DirSeq)
		cancel()
	}
	// A redelivered request may already have its receipt (the worker before this
	// one appended it and stopped before the ack): then it is not run again. So may
	// a first delivery that waited so long that it may have been redelivered
	// meanwhile, one appended before this process started (an earlier process
	// may have run it and died before JetStream made its ack durable), and one
	// stored before the consumer's last leader election (the old leader's delivery
	// may be lost). The projection is settled first, so a receipt appended anywhere
	// before this delivery is seen; a request is not run before it is (runonce.go).
	// A fresh first delivery has none; were another request event to carry the
	// same invocation id, the receipt's event id, derived from it, keeps the log
	// to one.
	md, mdErr := m.Metadata()
	if mdErr == nil {
		dup, looked := s.duplicate(ctx, m, &req, from, md)
		if !looked {
			giveBack(m)
			return
		}
		if dup {
			m.Ack()
			return
		}
	}
	// fresh: a first delivery, recent, since this start and the consumer's
	// last election. No other worker can be running the invocation (a second
	// request under its id is a repeat that duplicate does not run), so its
	// receipt may share a message of the log with others (eventlog.Packed;
	// see packReceipt).
	checkReceipt, fresh := "", false
	if mdErr != nil || md.NumDelivered > 1 || md.StreamSeq <= s.startSeq || time.Since(md.Timestamp) > s.cfg.AckWait/2 ||
		s.elections.electedSince(md.Timestamp) {
		checkReceipt = req.InvocationID
		m.InProgress()
		settle := func(ctx context.Context) error { return s.cfg.Projector.Settle(ctx, wire.DataStream) }
		if !s.settled(ctx, m, req.InvocationID, settle) {
			giveBack(m)
			return
		}
	} else if from.client != "" || wire.Chosen(req.InvocationID, from.eventID) {
		// A bus client may choose its invocation ids, and so may an HTTP caller
		// (an Idempotency-Key): one that already has a receipt is not run again.
		checkReceipt, fresh = req.InvocationID, true
	} else {
		fresh = true
	}
	g := s.cfg.Projector.Gate(req.Key, checkReceipt)
	if errors.Is(g.RowErr, projector.ErrNotFound) {
		g = s.catchUpRow(ctx, &req, checkReceipt, g)
	}
	in := gateInput(&req, &g)
	in.Owner = from.owner
	in.Rerun = s.rerun(m, &in)
	if in.Rerun {
		// capdir's re-run of an approved call: a bus client's is announced to it.
		from.client = rerunClient(req.Credential)
	}
	if g.RowErr == nil && !g.HasReceipt && gate.CanStrike(g.Row) {
		// A breaker is a fold over the data stream, and this node's projection may
		// lag the node that appended the request. For a row that can strike, wait
		// until everything appended before the request (the receipt that tripped
		// the breaker, an owner reset) is folded here, so the gate refuses every
		// request appended after the trip. Other rows have no breaker to wait for.
		if mdErr == nil && md.StreamSeq > 1 && s.cfg.Projector.Applied(wire.DataStream) < md.StreamSeq-1 {
			wctx, cancel := s.cfg.Projector.WaitContext(ctx)
			s.cfg.Projector.WaitFor(wctx, wire.DataStream, md.StreamSeq-1)
			cancel()
		}
		in.Breaker, in.BreakerErr = s.cfg.Projector.Breaker(req.Key)
	}
	if g.HasReceipt {
		m.Ack()
		return
	}
	s.catchUpRevocation(ctx, &in)
	started := s.cfg.Clock()
	d := newDraft(&req, from.actor, s.cfg.Name, started)
	d.TraceID = tracing.TraceID(ctx)
	s.run(ctx, &req, d, &in, nil)
	if ctx.Err() != nil {
		// Stopped mid-call (a drain past its deadline, or Stop): no receipt for a
		// call cut short; the request goes back to be run again elsewhere or at
		// the next start.
		giveBack(m)
		return
	}
	if d.pending {
		s.holdForApproval(ctx, m, &req, d) // no receipt yet: see approval.go
		return
	}
	if s.cfg.beforeReceipt != nil {
		if err := s.cfg.beforeReceipt(&req); err != nil {
			return // abandoned unacknowledged: JetStream redelivers after AckWait
		}
	}
	d.finish(s.cfg.Clock(), s.cfg.ResultCap, s.receiptBudget)
	// The draft's receipt, already on the heap: not copied again.
	rc := &d.Receipt
	claim := s.waiters.claim(rc.InvocationID) // delivered below (waiters_local.go)
	packed := fresh && !in.Rerun && s.packReceipt(md)
	if err := s.storeReceipt(ctx, rc, s.calls.noticeTo(from.client, req.InvocationID), packed); err != nil {
		s.waiters.unclaim(ctx, rc.InvocationID, claim)
		switch {
		case permanent(err):
			// Not even the failure receipt can be stored: running the call again
			// would not change that.
			s.cfg.Logger.Error("dispatcher: no receipt can be stored; request dropped", "invocation", req.InvocationID, "err", err)
			m.Term()
		case ctx.Err() != nil:
			giveBack(m)
		default:
			s.cfg.Logger.Error("dispatcher: receipt not appended; request will be redelivered", "invocation", req.InvocationID, "err", err)
			m.NakWithDelay(time.Second)
		}
		return
	}
	// The receipt is in the log: count it before a caller of this process waiting
	// for it is woken (it need not wait for the projection too), so a scrape after
	// the caller's answer sees it.
	s.cfg.Metrics.receipt(rc)
	s.waiters.deliver(rc)
	if s.cfg.beforeAck != nil {
		if err := s.cfg.beforeAck(&req); err != nil {
			return
		}
	}
	m.Ack()
}

// heldSlot is the request one worker holds.
type heldSlot struct {
	mu sync.Mutex
	m  eventlog.Msg

	// The slot's record in the held file (held.go), when there is one: written
	// before the worker runs a request, blanked before the request's delivery
	// ends. Used by the worker's goroutine only.
	file     *heldFile
	index    int
	recorded bool
	buf      [heldSlotSize]byte
	tracked  trackedMsg // what take hands the worker, when recorded
}

func (h *heldSlot) hold(m eventlog.Msg) {
	h.mu.Lock()
	h.m = m
	h.mu.Unlock()
}

// take holds m and records it in the held file, and returns the message the
// worker is to handle: m itself, or m wrapped so that its record is blanked
// before its delivery ends.
func (h *heldSlot) take(m eventlog.Msg) eventlog.Msg {
	eventlog.Taken(m)
	h.hold(m)
	if h.file == nil {
		return m
	}
	md, err := m.Metadata()
	if err != nil {
		return m
	}
	r := heldRecord{Reply: m.Reply(), Seq: md.StreamSeq, Delivered: md.NumDelivered, Since: md.Timestamp}
	if t, ok := m.(*eventlog.Redelivery); ok {
		r.Since = t.Claimed()
	}
	if h.recorded = h.file.write(h.index, &r, &h.buf); !h.recorded {
		return m
	}
	// The slot's own wrapper, not a new one on the heap: nothing keeps the message
	// past the worker's handling of it, and the slot holds one at a time.
	h.tracked = trackedMsg{Msg: m, slot: h}
	return &h.tracked
}

// forget blanks the slot's record, if it has one.
func (h *heldSlot) forget() {
	if h.recorded {
		h.recorded = false
		h.file.blank(h.index)
	}
}

// release ends the hold of the slot's request.
func (h *heldSlot) release() {
	h.forget()
	h.hold(nil)
	h.tracked = trackedMsg{}
}

func (h *heldSlot) holding() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m != nil
}

// keepInProgress tells JetStream, every interval until ctx ends, that each request
// a worker holds is still in progress, so a slow call is not redelivered to
// another worker and run twice. With interval a third of AckWait, a held request
// hears from it within a third of AckWait of being taken, however close to a tick
// that was: the AckWait runs from when the server sent the request, which on a
// loaded machine can be well before a worker took it. One goroutine serves every
// worker: a fast call costs two uncontended locks, not a timer (and one
// InProgress when a tick finds it held).
func keepInProgress(ctx context.Context, held []heldSlot, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			keepHeld(held)
		}
	}
}

// keepHeld is one of keepInProgress's ticks: every request a worker holds now
// is kept in progress, however recently it was taken.
func keepHeld(held []heldSlot) {
	for i := range held {
		h := &held[i]
		h.mu.Lock()
		if h.m != nil {
			h.m.InProgress()
		}
		h.mu.Unlock()
	}
}

// run passes the request through the gate and, if admitted, the runner, filling d.
// in holds the projection reads for the request, after the waits in handle. up
// places a step in its call tree (sub.go); nil for a request from the queue.
func (s *Service) run(ctx context.Context, req *wire.InvocationRequest, d *draft, in *gate.Input, up *lineage) {
	in.Actor = d.Actor
	a, refusal := s.gate.Check(in)
	d.Actor = a.Actor(in)
	if a.Row != nil {
		d.row(a.Row, a.Fingerprint, in.RowSeq)
	}
	if refusal != nil {
		traceRefusal(ctx, refusal)
		d.refuse(refusal.Status, refusal.Literal, refusal.Extra)
		d.pending = refusal.Pending
		return
	}
	d.BreakerGeneration = a.BreakerGeneration
	d.Body = a.Body // an arguments object runs, and is receipted, as its pipe form
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
	defer cancel()
	rctx, sp := traceRunner(rctx, a.Row)
	o := s.cfg.Runners.Run(rctx, runner.Call{Row: a.Row, Body: a.Body, Shape: req.Shape, Restricted: !in.Owner,
		Sub: s.invoker(ctx, req, d, in.Owner, a.Token, up)})
	d.outcome(o, req.Shape)
	endRunner(sp, d)
}

// gateInput is what the gate reads for req, from g, the projection's view of
// req's key.
func gateInput(req *wire.InvocationRequest, g *projector.GateView) gate.Input {
	in := gate.Input{Req: req, NotFound: errors.Is(g.RowErr, projector.ErrNotFound), RowErr: g.RowErr, Fingerprint: g.Fingerprint, RowSeq: g.Seq,
		Signature: g.Signature, SignatureErr: g.SignatureErr}
	if g.RowErr == nil {
		in.Row = g.Row
	}
	return in
}

// catchUpRow handles a key this node's projection does not have. The requesting
// node may have been behind the node that wrote the row, so ask the log for the
// key's last mutation: if this projection has not applied it yet, wait and read
// again. Only a miss pays for the lookup.
func (s *Service) catchUpRow(ctx context.Context, req *wire.InvocationRequest, checkReceipt string, g projector.GateView) projector.GateView {
	lctx, cancel := s.cfg.Projector.WaitContext(ctx)
	defer cancel()
	if seq, err := s.cfg.Projector.SettleKey(lctx, req.Key); err != nil || seq == 0 {
		return g
	}
	// The projection may have applied the row since g was read: read again, also
	// when SettleKey did not have to wait.
	return s.cfg.Projector.Gate(req.Key, checkReceipt)
}

// BreakerDecision is the decision the gate would make now for st and caller (""
// for the owner: the row as a whole): the cooldown and a replaced credential both
// close it. A breaker whose row is gone is checked
// without a credential.
func (s *Service) BreakerDecision(st breaker.State, caller string) breaker.Decision {
	auth := ""
	if row, _, err := s.cfg.Projector.Row(st.Key); err == nil {
		auth = row.Auth
	}
	return s.gate.Decide(st, auth, caller)
}

// packReceipt reports whether the receipt of a fresh delivery, stored at md,
// may be appended in a pack (eventlog.Packed): only while no other worker can
// have been handed the request, which takes the ack wait from its delivery
// (the server's clock; md.Timestamp is no later), less the clocks' allowance
// and the time a pack may take to be acknowledged. Later, the receipt goes
// alone under its own event id, which the log's duplicate detection knows.
func (s *Service) packReceipt(md *eventlog.MsgMetadata) bool {
	return md != nil && time.Since(md.Timestamp) < s.cfg.AckWait/3
}

// storeReceipt appends rc (see appendReceipt). When the log refuses it for good
// (too large, unencodable: see appendFailure), it appends the small failure
// receipt of failureReceipt instead and replaces *rc with it: the call is not run
// again for a receipt that could never be stored. client is the bus client that
// requested the call, told on its notice subject; "" for none. packed lets the
// receipt share a message with others (packReceipt): only its first attempt.
func (s *Service) storeReceipt(ctx context.Context, rc *wire.Receipt, client string, packed bool) error {
	size, err := s.appendReceipt(ctx, rc, client, packed)
	if err == nil || !permanent(err) {
		return err
	}
	s.cfg.Logger.Error("dispatcher: receipt refused by the log; storing a failure receipt instead", "invocation", rc.InvocationID, "bytes", size, "err", err)
	f := failureReceipt(rc, err, size)
	if _, err := s.appendReceipt(ctx, &f, client, false); err != nil {
		return err
	}
	*rc = f
	return nil
}

// appendReceipt appends the receipt under an event id derived from the invocation
// id (keyed: see receiptIDs), so a duplicate receipt inside the log's duplicate
// window is not stored, and once it is stored announces it on the notice subject
// of the bus client that requested it (none for capdir's own requests and for
// steps: their callers wait in-process). A failure a retry may mend (a timeout, no
// responders while the stream elects a leader) is retried with the same event id,
// for up to receiptRetryFor (while the log's disk is full, until it has room); one
// it cannot mend is returned at once, classified by appendFailure. It returns the length of the receipt's data.
// A packed first attempt (eventlog.Packed) is waited for as long as the log
// sends its pack again; the attempts after it go alone.
func (s *Service) appendReceipt(ctx context.Context, rc *wire.Receipt, client string, packed bool) (int, error) {
	ev, err := wire.NewEventWithID(s.waiters.eventID(rc.InvocationID), rc.FinishedAt, wire.TypeReceipt, s.engineActor, rc)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrReceiptUnstorable, err)
	}
	size := len(ev.Data)
	if size > s.cfg.Log.MaxPayload() {
		return size, receiptTooLarge(size, eventlog.ErrMaxPayload)
	}
	give := time.Now().Add(receiptRetryFor)
	for wait := receiptRetryFirst; ; wait = min(2*wait, receiptRetryMax) {
		err = s.tryAppendReceipt(ctx, rc, ev, client, packed)
		if err == nil {
			return size, nil
		}
		packed = false
		err = appendFailure(err, size)
		// A full disk keeps the receipt retrying as long as it lasts: handed back,
		// the call would run again, and be refused again, until MaxDeliver dropped it.
		late := time.Now().Add(wait).After(give) && !errors.Is(err, eventlog.ErrDiskFull)
		if permanent(err) || ctx.Err() != nil || errors.Is(err, eventlog.ErrClosed) || late {
			return size, err
		}
		s.cfg.Logger.Warn("dispatcher: receipt append failed; retrying", "invocation", rc.InvocationID, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return size, err
		}
	}
}

func (s *Service) tryAppendReceipt(ctx context.Context, rc *wire.Receipt, ev wire.Event, client string, packed bool) error {
	if s.cfg.beforeReceiptAppend != nil {
		s.cfg.beforeReceiptAppend(rc, ev)
	}
	var f *eventlog.Pending
	var err error
	if packed {
		f, err = s.cfg.Log.AppendAsync(wire.ReceiptSubject(rc.Key), ev, eventlog.Packed())
	} else {
		f, err = s.cfg.Log.AppendAsync(wire.ReceiptSubject(rc.Key), ev)
	}
	if err != nil {
		return err
	}
	var seq uint64
	if packed {
		// The log sends a pack that got no answer again, the same, for a
		// bounded time: appending the receipt again meanwhile could store it
		// twice.
		seq, err = eventlog.AwaitAck(ctx, f)
	} else {
		seq, err = eventlog.AwaitAckWithin(ctx, f, receiptAckWait)
	}
	if err != nil {
		return err
	}
	if f.Duplicate() {
		// The log holds a receipt under this event id already (another node's
		// worker ran the invocation first, before this node's projection showed
		// it): that one is the invocation's receipt, and the one callers get.
		if err := s.storedReceipt(ctx, seq, rc); err != nil {
			return err
		}
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

// storedReceipt replaces *rc with the receipt the log holds at seq, the earlier
// copy a duplicate append was answered with. A copy that is not a receipt of
// rc's invocation leaves *rc as it is.
func (s *Service) storedReceipt(ctx context.Context, seq uint64, rc *wire.Receipt) error {
	st, err := s.cfg.Log.ReadSeq(ctx, wire.DataStream, seq)
	if err != nil {
		return fmt.Errorf("dispatcher: read the receipt stored before at %d: %w", seq, err)
	}
	var stored wire.Receipt
	if err := st.DataAs(&stored); err != nil || stored.InvocationID != rc.InvocationID {
		s.cfg.Logger.Warn("dispatcher: a receipt's event id is held by another event", "invocation", rc.InvocationID, "seq", seq, "err", err)
		return nil
	}
	*rc = stored
	return nil
}

const (
	// receiptAckWait bounds the wait for the log to acknowledge a receipt.
	receiptAckWait = 10 * time.Second
	// A receipt whose append failed for a reason that may pass is appended again
	// (the request held in progress meanwhile), first after receiptRetryFirst,
	// doubling up to receiptRetryMax, for up to receiptRetryFor; only then is the
	// request handed back, to be checked for its receipt and run again.
	receiptRetryFirst = 100 * time.Millisecond
	receiptRetryMax   = 2 * time.Second
	receiptRetryFor   = 30 * time.Second
)

// sender is who appended a request, as its subject says (wire.ParseSubject).
type sender struct {
	// client is the bus client's name; "" for capdir's own request subject.
	client string
	// actor is who the receipt names (before the gate: a token holder's receipt
	// names the token's subject): the bus client, or the credential capdir
	// attested on its own subject.
	actor string
	// owner: capdir attests the owner's credential (gate.Input.Owner); see
	// wire.OwnerAttested. Only on capdir's own subject, which only capdir's
	// connections may publish on.
	owner bool
	// eventID is the request event's id (see wire.Chosen).
	eventID string
}

// decodeRequest reads a request message and who sent it. capdir's own requests
// (wire.RequestSubject) are believed: their credential is capdir's attestation. A
// bus client's (wire.BusRequestSubject) is never the owner's, whatever its body
// claims: its actor is the client the subject names, and its body's credential and
// directory position are not kept. Bus clients may leave the invocation id, trace
// and key empty: they are derived from the event id and the subject.
func decodeRequest(m eventlog.Msg) (wire.InvocationRequest, sender, error) {
	var req wire.InvocationRequest
	subj := wire.ParseSubject(m.Subject())
	if subj.Family != wire.RequestFamily && subj.Family != wire.BusRequestFamily {
		return req, sender{}, fmt.Errorf("subject %s is not capdir.data.req.<KEY> nor capdir.data.bus.<CLIENT>.<KEY>", m.Subject())
	}
	ev, err := wire.DecodeShared(m.Data())
	if err != nil {
		return req, sender{}, err
	}
	return requestOf(subj, m.Subject(), &ev)
}

// requestOf is decodeRequest's reading of ev, stored on subject (subj, parsed), a
// subject of one of the request families.
func requestOf(subj wire.Subject, subject string, ev *wire.Event) (wire.InvocationRequest, sender, error) {
	var req wire.InvocationRequest
	if ev.Type != wire.TypeInvocationRequested {
		return req, sender{}, fmt.Errorf("event type %q on a request subject", ev.Type)
	}
	if err := ev.RequestData(&req, subj.Key); err != nil {
		return req, sender{}, err
	}
	if req.Key == "" {
		req.Key = subj.Key
	}
	if req.Key != subj.Key {
		return req, sender{}, fmt.Errorf("key %q does not match subject %s", req.Key, subject)
	}
	if req.InvocationID == "" {
		req.InvocationID = wire.RequestInvocationID(ev.ID)
	}
	if subj.Family == wire.BusRequestFamily {
		// A chosen id becomes a token of the client's notice subject.
		if err := wire.CheckInvocationID(req.InvocationID); err != nil {
			return req, sender{}, err
		}
	}
	if req.Trace == "" {
		req.Trace = wire.NewTrace()
	}
	if subj.Family == wire.BusRequestFamily {
		actor := wire.ClientActor(subj.Client)
		req.Credential = actor
		req.DirSeq = 0 // a client cannot know it; a claimed one would only hold a worker
		return req, sender{client: subj.Client, actor: actor, eventID: ev.ID}, nil
	}
	actor := req.Credential
	if actor == "" {
		actor = ev.Actor
	}
	if actor == "" {
		actor = "nats:anonymous"
	}
	return req, sender{actor: actor, owner: wire.OwnerAttested(subject, req.Credential), eventID: ev.ID}, nil
}
