package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/oklog/ulid/v2"
)

// Calls. A bus client may send its request as one NATS request-reply to its call
// subject (wire.CallSubject) instead of publishing it to its request subject and
// waiting for the notice. Every node's responder is in the queue group CallQueue,
// so one node takes each call: it appends the event the client sent, unchanged, to
// the client's request subject (wire.BusRequestSubject), as the client would
// have (on a log only this node appends to, in a pack with other requests: see
// calls.pack), and replies with the receipt once it is in the log. A worker of any
// node takes the request from the log and runs it as it runs a published one: the
// same gate, the same receipt, the same idempotency (a repeat under a chosen id
// is answered as its notice would be, see repeatAnswer). The responder refuses at
// once, appending nothing, only what no worker would run: a payload that is not a
// request (ErrBadCall) or is too large for the log, at the door or once encoded
// for it (ErrPayloadTooLarge), a request the log did not store
// (ErrCallNotAppended), and a call past the calls the node answers at once
// (ErrCallBusy, Settings.MaxCalls); the last two may be sent again.

// CallQueue is the queue group of every node's responder.
const CallQueue = "capdir-call"

// calls is the responder of one service and the calls it is answering.
type calls struct {
	r      *eventlog.Responder
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup

	// slots holds one token per call being answered; a call that finds it full
	// is refused at once (busy).
	slots chan struct{}
	// idle hands a call to an answerer waiting for its next one (answerer).
	idle chan eventlog.Call
	// answerers is how many answerers run, started how many have started.
	answerers atomic.Int32
	started   atomic.Int64

	// replying holds the invocation ids, not chosen by their callers, of the calls
	// this node is answering, each with its client (a *replyingCall): their
	// receipts need no notice (noticeTo).
	replying sync.Map

	// pack is whether a call's request may share a message of the log with
	// other requests (eventlog.Packed): when the log packs and no other node
	// shares it (a node of an earlier version reads no call in a pack). Only a
	// call under an id derived from its event id, and no other packed call
	// under it in flight on this node (packing), is packed: a worker tells two
	// requests under one id apart by their sequences, which two requests of
	// one pack share.
	pack bool

	// packing holds the invocation ids of the packed calls in flight, each with
	// the call that claimed it (its *replyingCall), which alone removes it.
	packing sync.Map
}

// claimPacking reports whether call rp, under invocation id inv, may pack its
// request: when calls are packed and no other packed call under inv is in
// flight on this node. The claim is rp's until it releases it
// (releasePacking), whatever other calls under inv do, so no pack of this
// node's holds two requests under one id, and the worker tells a copy of an
// envelope stored in another message by its sequence.
func (c *calls) claimPacking(inv string, rp *replyingCall) bool {
	if !c.pack {
		return false
	}
	_, taken := c.packing.LoadOrStore(inv, rp)
	return !taken
}

// releasePacking ends rp's claim on inv, and no other's.
func (c *calls) releasePacking(inv string, rp *replyingCall) {
	c.packing.CompareAndDelete(inv, rp)
}

// packedCall is the append option of a packed call's request.
var packedCall = []eventlog.AppendOption{eventlog.Packed()}

// replyingCall is a call this node is answering under an id derived from its
// event id: the client that sent it, and whether a worker of this node, about
// to store the receipt of that client's request under the id, found the id the
// client's own (noticeTo), so that its receipt needs no second look (awaitOwn).
type replyingCall struct {
	client string
	own    atomic.Bool
}

// noticeTo is the bus client to tell, on its notice subject, of the receipt of
// invocation inv that client requested: client, unless the call is one this
// node answers with a reply and its id was derived from the one event the
// responder appended, so no one else can be waiting for a notice of it. A chosen
// id is told: the same client may also wait for it on its notice subject. Only
// a worker that ran client's request under inv, which it found client's own
// (the first request under it, or one scoped to client), asks: the call
// answered under inv is told so.
func (c *calls) noticeTo(client, inv string) string {
	if c == nil || client == "" {
		return client
	}
	if v, ok := c.replying.Load(inv); ok && v.(*replyingCall).client == client {
		v.(*replyingCall).own.Store(true)
		return ""
	}
	return client
}

// newCalls makes a service's calls, before its workers start (they read
// noticeTo); startCalls subscribes the responder once they run.
func newCalls(most int, pack bool) *calls {
	c := &calls{slots: make(chan struct{}, most), idle: make(chan eventlog.Call), pack: pack}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// startCalls subscribes the service's responder.
func (s *Service) startCalls() error {
	c := s.calls
	r, err := s.cfg.Log.Respond(wire.CallSubjects, CallQueue, func(call eventlog.Call) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return // draining: another node's responder, or the caller's retry, takes it
		}
		select {
		case c.slots <- struct{}{}:
		default:
			s.refuseBusy(call)
			return
		}
		select {
		case c.idle <- call:
		default:
			c.wg.Add(1)
			go s.answerer(call)
		}
	})
	if err != nil {
		return fmt.Errorf("dispatcher: calls: %w", err)
	}
	c.mu.Lock()
	c.r = r
	c.mu.Unlock()
	return nil
}

// answererIdle is how long an answerer waits for its next call before it ends
// (a variable for tests).
var answererIdle = time.Second

// answerer answers call, then each call handed to it while it waits for one
// (calls.idle), until it has waited answererIdle or the responder stops. An
// answerer kept from one call to the next keeps the stack its first call grew:
// a goroutine of its own for each call grew its stack at every call, about a
// twentieth of a bus call's CPU.
func (s *Service) answerer(call eventlog.Call) {
	c := s.calls
	c.answerers.Add(1)
	c.started.Add(1)
	defer func() {
		c.answerers.Add(-1)
		c.wg.Done()
	}()
	var wait *time.Timer
	for {
		s.answer(c.ctx, call)
		call = eventlog.Call{} // not held while waiting
		<-c.slots
		if wait == nil {
			wait = time.NewTimer(answererIdle)
			defer wait.Stop()
		} else {
			wait.Reset(answererIdle)
		}
		select {
		case call = <-c.idle:
		case <-wait.C:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// stopTaking ends the subscription: no call is taken after it.
func (c *calls) stopTaking() {
	if c == nil {
		return
	}
	c.mu.Lock()
	r := c.r
	c.closed = true
	c.mu.Unlock()
	if r != nil {
		r.Stop()
	}
}

// stop stops taking calls and cuts those still waiting for their receipt: they
// get no reply, and their callers send them again (to another node, or to this
// one restarted) under the same invocation id.
func (c *calls) stop() {
	if c == nil {
		return
	}
	c.stopTaking()
	c.cancel()
	c.wg.Wait()
}

// refuseBusy answers a call that finds this node answering as many calls as it
// takes at once (Settings.MaxCalls): nothing is read of it but its subject, and
// nothing appended. It runs on the subscription's goroutine, so it stays cheap.
func (s *Service) refuseBusy(c eventlog.Call) {
	_, key, _ := wire.ParseCallSubject(c.Subject())
	req := wire.InvocationRequest{Key: key}
	s.reply(c, &req, wire.TypeCallRefused, wire.CallRefused{Key: key, Retry: true,
		Error:    fmt.Errorf("%w: this node answers at most %d calls at once; nothing was appended", ErrCallBusy, s.cfg.MaxCalls).Error(),
		HowToFix: callBusyFix})
}

// callWait bounds how long a call waits for its receipt: as long as a request
// may take to run, be redelivered once and run again.
func (s *Service) callWait() time.Duration {
	return 2*s.cfg.RunTimeout + s.cfg.AckWait + receiptRetryFor
}

// answer takes one call: the request appended, the reply sent once its receipt is
// in the log (or a repeat's answer, or a refusal at once). A call whose wait
// ends first gets no reply.
func (s *Service) answer(ctx context.Context, c eventlog.Call) {
	ev, req, client, err := s.callRequest(c)
	if err != nil {
		s.reply(c, &req, wire.TypeCallRefused, wire.CallRefused{InvocationID: req.InvocationID, Key: req.Key, Error: err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.callWait())
	defer cancel()
	asked := req.InvocationID
	// The call may run under the id scoped to its client (another sender took
	// its id first, which is known only once its request is stored): it waits
	// under both from the start, so that no receipt under either comes before
	// the wait, and tells which is its own when a receipt comes (awaitOwn).
	scoped := wire.ScopedInvocationID(client, asked)
	ch := s.waiters.addEither(asked, scoped)
	defer s.waiters.remove(asked, ch) // no-ops once receipts woke it
	defer s.waiters.remove(scoped, ch)
	var rp *replyingCall
	var opts []eventlog.AppendOption
	if !wire.Chosen(req.InvocationID, ev.ID) {
		rp = &replyingCall{client: client}
		s.calls.replying.Store(req.InvocationID, rp)
		defer s.calls.replying.CompareAndDelete(req.InvocationID, rp)
		if s.calls.claimPacking(req.InvocationID, rp) {
			opts = packedCall
			defer s.calls.releasePacking(req.InvocationID, rp)
		}
	}
	var seq uint64
	var again, repeat bool
	f, err := s.cfg.Log.AppendAsync(wire.BusRequestSubject(client, req.Key), ev, opts...)
	if err == nil {
		seq, again, err = s.callStored(ctx, f)
		if err == nil && (again || wire.Chosen(req.InvocationID, ev.ID)) {
			var typ string
			var data any
			var told bool
			typ, data, told, repeat = s.callRepeat(ctx, &req, client, seq)
			if told {
				s.replyRepeat(ctx, c, &req, client, typ, data)
				return
			}
			if req.InvocationID != asked { // another sender's id: the client's own is the scoped one
				if rc, _, err := s.cfg.Projector.Receipt(req.InvocationID); err == nil {
					if !repeat || !s.refuseRepeat(ctx, c, &req, &rc) {
						s.replyReceipt(ctx, c, &req, client, &rc)
					}
					return
				}
			}
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			s.reply(c, &req, wire.TypeCallRefused, s.appendRefusal(&req, err))
		}
		return
	}
	if rp != nil && !again {
		if typ, data := s.callEarlier(ctx, &req, client, seq); typ != "" {
			s.replyRepeat(ctx, c, &req, client, typ, data)
			return
		}
	}
	// A repeat (the log held these very bytes already, by their event id, or an
	// earlier request under the chosen id still runs): the call waits for the
	// first one's receipt, a repeat's answer, given only if the token sent now
	// permits the call when it comes (as repeatAnswer says).
	s.awaitOwn(ctx, c, &req, client, asked, ch, rp, repeat || again && seq != 0)
}

// refuseRepeat answers a call that repeats an earlier request, whose receipt rc
// came while it waited, with the gate's refusal, and reports true, when the
// token it sent does not permit the call now (repeatRefusal), or as another
// request when rc is another token subject's call (ofAnotherSubject); else it
// answers nothing and reports false.
func (s *Service) refuseRepeat(ctx context.Context, c eventlog.Call, req *wire.InvocationRequest, rc *wire.Receipt) bool {
	if s.ofAnotherSubject(req, rc) {
		s.reply(c, req, wire.TypeInvocationRefused, s.anotherRequest(ctx, req))
		return true
	}
	r := s.repeatRefusal(ctx, req, false, rc)
	if r == nil {
		return false
	}
	s.reply(c, req, wire.TypeInvocationRefused, gateRefused(req, r))
	return true
}

// replyRepeat answers a call that repeats an earlier request under its
// invocation id with what repeatAnswer gave: the first request's receipt, once
// shown to be the client's own call's, or a refusal; nothing when typ is "".
func (s *Service) replyRepeat(ctx context.Context, c eventlog.Call, req *wire.InvocationRequest, client, typ string, data any) {
	if rc, ok := data.(*wire.Receipt); ok && typ == wire.TypeReceipt {
		s.replyReceipt(ctx, c, req, client, rc)
	} else if typ != "" {
		s.reply(c, req, typ, data)
	}
}

// callEarlier answers a call under an invocation id derived from its event id
// whose request the log stored at seq as a new message: a copy of an envelope
// the client sent before, its bytes unchanged, is stored again once the log's
// duplicate window has passed (inside it the log answers that it holds it, and
// callRepeat answers). No worker runs a copy but the first, and the first
// copy's receipt, already folded, would wake no wait: when there is one, it is
// the answer, as repeatAnswer gives it. typ is "" when the log holds no earlier
// request of the client's under the id, or its receipt is still to come (it
// wakes the call's wait). Under an id another sender took first, the client's
// own is the one scoped to it, and req's id is set to it, as callRepeat does.
// One lookup in the projection once it has read the log up to seq-1, as the
// worker makes for every bus request (two under another sender's id).
func (s *Service) callEarlier(ctx context.Context, req *wire.InvocationRequest, client string, seq uint64) (typ string, data any) {
	if seq <= 1 {
		return "", nil
	}
	first, known, err := s.cfg.Projector.InvocationBefore(ctx, req.InvocationID, seq)
	// An earlier request's receipt stored before this request was handed to
	// the waits of that time (this call's may have begun after): read and not
	// yet committed, it is found once the projection has folded it.
	if !known || !answersBefore(&first, err, seq) {
		wctx, cancel := s.cfg.Projector.WaitContext(ctx)
		err = s.cfg.Projector.WaitFor(wctx, wire.DataStream, seq-1)
		cancel()
		if err != nil {
			return "", nil // the wait for the receipt goes on
		}
		first, err = s.cfg.Projector.Invocation(req.InvocationID)
	}
	if err == nil && first.Seq != 0 && first.Seq < seq && first.Client != client {
		// Another sender's id: the client's calls under it run under the id
		// scoped to it (as the worker and the fold take them), looked up there.
		req.InvocationID = wire.ScopedInvocationID(client, req.InvocationID)
		first, err = s.cfg.Projector.Invocation(req.InvocationID)
	}
	if err != nil || first.Seq == 0 || first.Seq >= seq || first.Client != client {
		return "", nil
	}
	rc := firstReceipt(&first)
	if rc == nil {
		return "", nil
	}
	return s.repeatAnswer(ctx, &first, rc, req, client)
}

// replyReceipt answers a call with rc once rc is shown to be the client's own
// call's: a receipt that woke a wait under an id another sender holds (when
// the projection could not yet tell the call's id apart) is never handed over.
// When the first request under rc's id cannot be read, the call is refused, to
// be sent again under the same id.
func (s *Service) replyReceipt(ctx context.Context, c eventlog.Call, req *wire.InvocationRequest, client string, rc *wire.Receipt) {
	inv, err := s.firstCaller(ctx, rc.InvocationID)
	if err == nil && inv.Seq != 0 && inv.Client != client {
		err = fmt.Errorf("invocation %s is another caller's", rc.InvocationID)
	}
	s.replyOwn(c, req, client, rc, err)
}

// replyOwn answers a call with rc, its own receipt, or, when err says it could
// not be shown to be, with a refusal to send it again.
func (s *Service) replyOwn(c eventlog.Call, req *wire.InvocationRequest, client string, rc *wire.Receipt, err error) {
	if err == nil {
		s.reply(c, req, wire.TypeReceipt, rc)
		return
	}
	s.cfg.Logger.Warn("dispatcher: a call's receipt was not handed over", "client", client, "invocation_id", req.InvocationID, "err", err)
	s.reply(c, req, wire.TypeCallRefused, wire.CallRefused{InvocationID: req.InvocationID, Key: req.Key, Retry: true,
		Error:    fmt.Errorf("%w: this node could not yet tell the call's receipt from another caller's; its request is in the log and runs once", ErrCallUntold).Error(),
		HowToFix: "send the same call again (the same invocation id): it is answered with its own receipt"})
}

// firstCaller reads the first request under invocation id inv, once the
// projection holds it: a receipt may be read before the batch holding its
// request committed.
func (s *Service) firstCaller(ctx context.Context, inv string) (projector.Invocation, error) {
	first, err := s.cfg.Projector.FirstRequest(inv)
	if errors.Is(err, projector.ErrNotFound) {
		if err = s.cfg.Projector.Settle(ctx, wire.DataStream); err == nil {
			first, err = s.cfg.Projector.FirstRequest(inv)
		}
	}
	return first, err
}

// callRequest reads a call: the request event it carries, the request as a
// worker will read it from the log, and the client its subject names. An error
// matches ErrBadCall or ErrPayloadTooLarge; req holds what was read of it.
func (s *Service) callRequest(c eventlog.Call) (wire.Event, wire.InvocationRequest, string, error) {
	var req wire.InvocationRequest
	client, key, ok := wire.ParseCallSubject(c.Subject())
	if !ok {
		return wire.Event{}, req, "", fmt.Errorf("%w: %.120q is not capdir.call.<CLIENT>.<KEY>", ErrBadCall, c.Subject())
	}
	req.Key = key
	// A request is at most a body at the payload ceiling and its envelope, and its
	// append adds a header: what the log cannot take is refused here, not later.
	if n, most := len(c.Data()), min(s.cfg.MaxPayload+envelopeReserve, s.cfg.Log.MaxPayload()-1024); n > most {
		return wire.Event{}, req, client, fmt.Errorf("%w: the request is %d bytes; a call carries at most %d", ErrPayloadTooLarge, n, most)
	}
	ev, err := wire.DecodeShared(c.Data())
	if err != nil {
		return ev, req, client, fmt.Errorf("%w: not an event envelope: %v", ErrBadCall, err)
	}
	// A ULID, as wire.Call sends: an invocation id the caller did not choose is
	// made from the event id, so a free-form one could name another caller's
	// chosen id and be woken by that call's receipt.
	if _, err := ulid.ParseStrict(ev.ID); err != nil {
		return ev, req, client, fmt.Errorf("%w: event id %.80q must be a ULID (26 characters of Crockford's base32)", ErrBadCall, ev.ID)
	}
	subject := wire.BusRequestSubject(client, key)
	got, _, err := requestOf(wire.ParseSubject(subject), subject, &ev)
	if err != nil {
		return ev, req, client, fmt.Errorf("%w: %v", ErrBadCall, err)
	}
	return ev, got, client, nil
}

// appendRefusal is the refusal of a call whose request the log did not store
// (err: the append's error). A request the log refuses for its size (encoded
// again for the log, an envelope the client wrote with spaces or unescaped
// '<' grows) is as too large as one refused at the door: sending it again
// cannot mend it. Anything else may pass: retry.
func (s *Service) appendRefusal(req *wire.InvocationRequest, err error) wire.CallRefused {
	r := wire.CallRefused{InvocationID: req.InvocationID, Key: req.Key}
	if eventlog.TooLarge(err) {
		r.Error = fmt.Errorf("%w: the request is over %d bytes as the log stores it (encoded again: JSON escapes such as \\u003c for '<' count); the log takes at most that in one message",
			ErrPayloadTooLarge, s.cfg.Log.MaxPayload()).Error()
		return r
	}
	r.Error, r.Retry = fmt.Errorf("%w: %w", ErrCallNotAppended, err).Error(), true
	return r
}

// callStored waits for the log to store a call's request, and returns its
// sequence. again is true when the log already held it (the same request sent
// again: its receipt may be in), or when the acknowledgement was lost (seq 0),
// which is not an error: the request may be stored, and its receipt may come.
func (s *Service) callStored(ctx context.Context, f *eventlog.Pending) (seq uint64, again bool, err error) {
	select {
	case ack := <-f.Stored():
		return ack.Sequence, ack.Duplicate, nil
	case <-f.Failed():
		if err, lost := appendFailed(f.Err()); !lost {
			return 0, false, err
		}
		return 0, true, nil
	case <-s.cfg.Log.Full():
		return 0, false, s.cfg.Log.FullError()
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// callRepeat answers a call whose invocation id the log may already know: an
// earlier request under its chosen id (answered as repeatAnswer says; under an
// id another sender took first, the call is the client's own, and req's id is
// set to the one scoped to it), or its own request sent again, whose receipt may
// be in. told is false when the call is to wait for its receipt;
// typ is "" when it is to get no reply. repeat says the call repeats an earlier
// request, still running: the receipt it waits for is then a repeat's answer.
func (s *Service) callRepeat(ctx context.Context, req *wire.InvocationRequest, client string, seq uint64) (typ string, data any, told, repeat bool) {
	if err := s.cfg.Projector.Settle(ctx, wire.DataStream); err != nil {
		return "", nil, false, false
	}
	first, err := s.cfg.Projector.Invocation(req.InvocationID)
	if err != nil {
		return "", nil, false, false
	}
	if first.Seq != 0 && first.Client != client {
		// Another sender's id: the call is the client's own under the id scoped
		// to it (as the worker and the fold take it), looked up there. Not
		// folded there (its acknowledgement lost, it may not be stored): nothing
		// of another caller's call, not even that its id is taken.
		req.InvocationID = wire.ScopedInvocationID(client, req.InvocationID)
		if first, err = s.cfg.Projector.Invocation(req.InvocationID); err != nil {
			return "", nil, true, false
		}
	}
	rc := firstReceipt(&first)
	if (first.Seq == 0 || seq == 0 || first.Seq >= seq) && rc == nil {
		// This request is the first under its id (or cannot be told apart from
		// it), its receipt still to come: the call waits for it.
		return "", nil, false, false
	}
	// An earlier request's receipt, or this request's own when the log held its
	// bytes already (sent again inside the duplicate window, whose event id the
	// log knows): either way the first call's, answered as repeatAnswer says:
	// the token sent now must permit the call, and under a chosen id the
	// request must be that call's (the log deduplicates by event id alone,
	// whatever the body; an id derived from the event's has no digest folded,
	// and its event id is the client's own, so a copy is its first call).
	typ, data = s.repeatAnswer(ctx, &first, rc, req, client)
	return typ, data, typ != "", true
}

// reply answers a call with an event of type typ. A reply that does not go out
// loses nothing: the caller sends the call again under the same id.
func (s *Service) reply(c eventlog.Call, req *wire.InvocationRequest, typ string, data any) {
	ev, err := s.noticeEvent(req, typ, data)
	var b []byte
	if err == nil {
		b, err = wire.Encode(&ev)
	}
	if err == nil {
		err = c.Reply(b)
	}
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: call not answered", "invocation", req.InvocationID, "type", typ, "err", err)
	}
}
