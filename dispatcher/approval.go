package dispatcher

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// The watcher's side in the dispatcher. A call the gate holds for the owner's
// approval (gate.Refusal.Pending) gets no receipt from the worker: the worker appends
// APPROVAL_REQUESTED on the invocation's approval subject (expecting the subject
// empty, so one request event per invocation, whoever delivers it), wakes a caller
// of this node waiting for the call with the pending state, and acknowledges the
// request. Then exactly one of these writes the invocation's one receipt:
//
//   - the owner approves (DecideApproval): the decision is appended expecting the
//     APPROVAL_REQUESTED as its subject's last event, then the request, read back
//     from the data stream, is appended again on capdir's own request subject under
//     its keyed re-run event id (ids.go); the worker admits it with the approval
//     granted, and the call's receipt is the run's;
//   - the owner denies: the decision, then the REFUSED_APPROVAL_DENIED receipt;
//   - nobody decides in time: the sweeper of any node appends the decision expire,
//     then the REFUSED_APPROVAL_EXPIRED receipt.
//
// Decisions race through the log's optimistic concurrency: only the first lands.
// Every receipt carries the event id derived from the invocation id, so a second
// copy inside the log's duplicate window is not stored. The sweeper also mends a
// decision whose receipt was never written (the deciding node stopped between the
// two appends): a deny or an expire gets its receipt; an approval whose re-run may
// not have been appended gets it appended again, with the same event id, while the
// first copy would still be deduplicated (approvalRerunUntil).

// ApprovalConfig configures the watcher's side of the dispatcher.
type ApprovalConfig struct {
	// TTL is how long a held call waits for the owner's decision (default 15 min).
	TTL time.Duration
	// Sweep is how often each node looks for approvals that expired undecided and
	// for decisions whose receipt is missing (default 2s).
	Sweep time.Duration
}

// DefaultApprovalTTL is ApprovalConfig.TTL's default.
const DefaultApprovalTTL = 15 * time.Minute

func (c *ApprovalConfig) setDefaults() {
	if c.TTL <= 0 {
		c.TTL = DefaultApprovalTTL
	}
	if c.Sweep <= 0 {
		c.Sweep = 2 * time.Second
	}
}

const (
	// approvalMendAfter is how long after a decision the sweeper waits for its
	// receipt (or re-run) before mending it: the deciding node writes it at once.
	approvalMendAfter = 10 * time.Second
	// approvalMendFor is how far back the sweeper looks for decisions to mend.
	approvalMendFor = time.Hour
	// approvalRerunUntil is how long after an approval its re-run may be appended
	// again: well inside the log's duplicate window (eventlog.Config's
	// DuplicateWindow, two minutes), so a copy of a re-run that was appended after
	// all is dropped by the log rather than run twice.
	approvalRerunUntil = time.Minute
)

// rerun reports whether m is capdir's re-run of an approved call: on capdir's own
// request subject, under the keyed re-run event id of its invocation. It is
// computed only for a request the watcher may hold (a sensitive row, not the owner).
func (s *Service) rerun(m eventlog.Msg, in *gate.Input) bool {
	if in.Owner || in.Row == nil || in.Row.Sensitive != 1 || wire.ParseSubject(m.Subject()).Family != wire.RequestFamily {
		return false
	}
	id := m.ID()
	return id != "" && hmac.Equal([]byte(id), []byte(s.waiters.ids.rerun(in.Req.InvocationID)))
}

// holdForApproval is the worker's answer to a call the watcher held: the approval
// request instead of a receipt. d is the draft the gate filled (actor, status
// PENDING_APPROVAL); it is handed to a waiting caller of this node, never stored.
func (s *Service) holdForApproval(ctx context.Context, m eventlog.Msg, req *wire.InvocationRequest, d *draft) {
	md, err := m.Metadata()
	if err != nil {
		s.cfg.Logger.Error("dispatcher: held call without its log position; will be redelivered", "invocation", req.InvocationID, "err", err)
		m.NakWithDelay(time.Second)
		return
	}
	now := s.cfg.Clock()
	ev, err := wire.NewEvent(now, wire.TypeApprovalRequested, "engine:"+s.cfg.Name, wire.ApprovalRequested{
		InvocationID: req.InvocationID, Key: req.Key, Trace: req.Trace, Actor: d.Actor,
		BodyFingerprint: Fingerprint(req.Sent()), RequestSeq: md.StreamSeq,
		RequestedAt: now.UTC(), ExpiresAt: now.Add(s.cfg.Approvals.TTL).UTC(),
	})
	if err != nil {
		s.cfg.Logger.Error("dispatcher: approval request not encoded; request dropped", "invocation", req.InvocationID, "err", err)
		m.Term()
		return
	}
	actx, cancel := context.WithTimeout(ctx, receiptAckWait)
	_, err = s.cfg.Log.Append(actx, wire.ApprovalSubject(req.InvocationID), ev, eventlog.ExpectLastSubjectSeq(0))
	cancel()
	switch {
	case err == nil:
	case errors.Is(err, eventlog.ErrConflict):
		// The invocation has its approval already: this is a redelivery of the
		// request it names, or another request repeating its invocation id. Neither
		// runs nor gets a receipt of its own.
		s.cfg.Logger.Info("dispatcher: the invocation already has its approval; request acknowledged", "invocation", req.InvocationID)
	case ctx.Err() != nil:
		m.Nak()
		return
	default:
		s.cfg.Logger.Error("dispatcher: approval request not appended; request will be redelivered", "invocation", req.InvocationID, "err", err)
		m.NakWithDelay(time.Second)
		return
	}
	s.waiters.wakePending(d.Receipt.InvocationID, &d.Receipt)
	m.Ack()
}

// approvalState is the gate's view of an invocation's approval.
func (s *Service) approvalState(inv string) gate.Approval {
	a, err := s.cfg.Projector.Approval(inv)
	if err != nil {
		return gate.Approval{}
	}
	g := gate.Approval{By: a.DecidedBy, Key: a.Key, BodyFingerprint: a.BodyFingerprint, ExpiresAt: a.ExpiresAt}
	switch a.Decision {
	case wire.DecisionApprove:
		g.State = gate.ApprovalGranted
	case wire.DecisionDeny:
		g.State = gate.ApprovalDenied
	case wire.DecisionExpire:
		g.State = gate.ApprovalExpired
	default:
		g.State = gate.ApprovalPending
	}
	return g
}

// DecideApproval records the owner's decision (wire.DecisionApprove or
// DecisionDeny) on the approval of invocation inv, by whom, and carries it out.
// A denial returns the REFUSED_APPROVAL_DENIED receipt. An approval runs the call
// again and returns its receipt; when ctx ends first it returns the ids and an
// error matching ErrPending (the call runs on; its receipt comes later). The
// caller's token is checked again when the call runs: it must still be valid and
// not revoked. Errors: ErrBadDecision, ErrApprovalUnknown, ErrApprovalDecided,
// ErrApprovalExpired, ErrApprovalRequestGone, or the log's.
func (s *Service) DecideApproval(ctx context.Context, inv, decision, by string) (wire.Receipt, error) {
	if decision != wire.DecisionApprove && decision != wire.DecisionDeny {
		return wire.Receipt{}, fmt.Errorf("%w, not %q", ErrBadDecision, decision)
	}
	a, err := s.LookupApproval(ctx, inv)
	if err != nil {
		return wire.Receipt{}, err
	}
	now := s.cfg.Clock()
	if err := decidable(&a, now); err != nil {
		return wire.Receipt{}, err
	}
	var orig wire.InvocationRequest
	var subject string
	if decision == wire.DecisionApprove {
		// Read back before deciding: a call that cannot run is not approved.
		if orig, subject, err = s.heldRequest(ctx, &a); err != nil {
			return wire.Receipt{}, err
		}
	}
	seq, err := s.appendDecision(ctx, &a, decision, by, now)
	if errors.Is(err, eventlog.ErrConflict) {
		// Another decision landed first (the owner through another node, or an
		// expiry): say which.
		if b, lerr := s.LookupApproval(ctx, inv); lerr == nil && decidable(&b, now) != nil {
			return wire.Receipt{}, decidable(&b, now)
		}
		return wire.Receipt{}, fmt.Errorf("%w (%v)", ErrApprovalDecided, err)
	}
	if err != nil {
		return wire.Receipt{}, err
	}
	// The re-run's worker reads the decision from its projection, after waiting
	// for the control-stream position the re-run carries: fold it here first.
	if err := s.cfg.Projector.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		return wire.Receipt{}, fmt.Errorf("dispatcher: decision appended (sequence %d) but not yet projected: %w", seq, err)
	}
	if decision == wire.DecisionDeny {
		return s.decisionReceipt(ctx, &a, gate.ApprovalDeniedRefusal())
	}
	return s.runApproved(ctx, &a, &orig, subject, true)
}

// decidable is nil when a can take the owner's decision at now, else why not.
func decidable(a *projector.Approval, now time.Time) error {
	switch {
	case a.ExpiredAt(now):
		return fmt.Errorf("%w: it expired at %s", ErrApprovalExpired, a.ExpiresAt.UTC().Format(time.RFC3339))
	case a.Decided():
		return fmt.Errorf("%w: %s by %s", ErrApprovalDecided, a.Decision, a.DecidedBy)
	}
	return nil
}

// LookupApproval is inv's approval, looked for again once this node's projection
// has caught up with the control stream when it is not there yet.
func (s *Service) LookupApproval(ctx context.Context, inv string) (projector.Approval, error) {
	if !wire.ValidKey(inv) {
		return projector.Approval{}, fmt.Errorf("%w: %q is not an invocation id", ErrApprovalUnknown, inv)
	}
	a, err := s.cfg.Projector.Approval(inv)
	if errors.Is(err, projector.ErrNotFound) {
		sctx, cancel := s.cfg.Projector.WaitContext(ctx)
		serr := s.cfg.Projector.Settle(sctx, wire.ControlStream)
		cancel()
		if serr != nil && ctx.Err() != nil {
			return a, serr
		}
		a, err = s.cfg.Projector.Approval(inv)
	}
	if errors.Is(err, projector.ErrNotFound) {
		return a, fmt.Errorf("%w: %s", ErrApprovalUnknown, inv)
	}
	return a, err
}

// appendDecision appends the decision on a's subject, expecting a's request as
// the subject's last event; it returns the decision's sequence. ErrConflict: a
// decision is there already.
func (s *Service) appendDecision(ctx context.Context, a *projector.Approval, decision, by string, now time.Time) (uint64, error) {
	ev, err := wire.NewEvent(now, wire.TypeApprovalDecided, by, wire.ApprovalDecided{
		InvocationID: a.InvocationID, Decision: decision, By: by, At: now.UTC(),
	})
	if err != nil {
		return 0, err
	}
	actx, cancel := context.WithTimeout(ctx, receiptAckWait)
	defer cancel()
	return s.cfg.Log.Append(actx, wire.ApprovalSubject(a.InvocationID), ev, eventlog.ExpectLastSubjectSeq(a.Seq))
}

// ApprovalBody is what the call a's approval was asked for sent as arguments, as
// the owner sees it: the pipe body, or the arguments object's text (InvocationRequest.Sent),
// read back from the data stream (ErrApprovalRequestGone when it is not there any
// more).
func (s *Service) ApprovalBody(ctx context.Context, a *projector.Approval) (string, error) {
	req, _, err := s.heldRequest(ctx, a)
	if err != nil {
		return "", err
	}
	return req.Sent(), nil
}

// heldRequest reads back the request a names, from the data stream, and its
// subject. It must be the request the approval was asked for: an invocation
// request on a request subject of a's key, of a's invocation, with a's body.
func (s *Service) heldRequest(ctx context.Context, a *projector.Approval) (wire.InvocationRequest, string, error) {
	var req wire.InvocationRequest
	evs, traceparent, tracestate, err := s.cfg.Log.ReadEventsTraced(ctx, wire.DataStream, a.RequestSeq)
	if err != nil {
		if errors.Is(err, eventlog.ErrNoMessage) {
			return req, "", fmt.Errorf("%w (sequence %d of %s; the data stream's retention may have removed it): %w",
				ErrApprovalRequestGone, a.RequestSeq, wire.DataStream, err)
		}
		return req, "", err
	}
	st := approvalRequestOf(evs, a.InvocationID)
	subj := wire.ParseSubject(st.Subject)
	if st.Invalid != "" || st.Type != wire.TypeInvocationRequested || subj.Key != a.Key ||
		subj.Family != wire.RequestFamily && subj.Family != wire.BusRequestFamily || st.DataAs(&req) != nil {
		return req, "", fmt.Errorf("%w: sequence %d of %s is not a request for %s", ErrApprovalRequestGone, a.RequestSeq, wire.DataStream, a.Key)
	}
	if req.InvocationID == "" {
		req.InvocationID = wire.RequestInvocationID(st.ID)
	}
	if subj.Family == wire.BusRequestFamily && wire.ScopedInvocationID(subj.Client, req.InvocationID) == a.InvocationID {
		req.InvocationID = a.InvocationID // another sender held the id: the call ran scoped to its client
	}
	if req.InvocationID != a.InvocationID || (req.Key != "" && req.Key != a.Key) || !wire.ApprovalMatches(a.BodyFingerprint, &req) {
		return req, "", fmt.Errorf("%w: sequence %d of %s is another request", ErrApprovalRequestGone, a.RequestSeq, wire.DataStream)
	}
	heldTrace(&req, traceparent, tracestate)
	return req, st.Subject, nil
}

// approvalRequestOf is, of evs (the events of one message), the request of
// invocation inv: the message's one event, or the event of a pack that carries
// inv (the facade packs the requests under ids it minted, so a pack holds one
// request of each). heldRequest checks what it gets.
func approvalRequestOf(evs []eventlog.Stored, inv string) *eventlog.Stored {
	if len(evs) == 1 {
		return &evs[0]
	}
	for i := range evs {
		var h struct {
			InvocationID string `json:"invocation_id"`
		}
		if evs[i].Invalid == "" && evs[i].DataAs(&h) == nil && h.InvocationID == inv {
			return &evs[i]
		}
	}
	return &evs[0]
}

// runApproved appends the approved call again on capdir's own request subject,
// under its keyed re-run event id, with the caller's arguments (body or arguments
// object), credential and token: the
// gate checks the caller again, and the watcher admits it. With wait it waits for
// the receipt as Invoke does.
func (s *Service) runApproved(ctx context.Context, a *projector.Approval, orig *wire.InvocationRequest, subject string, wait bool) (wire.Receipt, error) {
	req := wire.InvocationRequest{
		InvocationID: a.InvocationID, Trace: a.Trace, Key: a.Key, Body: orig.Body, Args: orig.Args, Token: orig.Token, Traceparent: orig.Traceparent, Tracestate: orig.Tracestate,
		Credential: rerunCredential(orig.Credential, subject), DirSeq: s.cfg.Projector.Applied(wire.ControlStream),
	}
	pending := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: a.InvocationID, Trace: a.Trace, Key: a.Key, Actor: a.Actor}}
	ev, err := wire.NewEvent(s.cfg.Clock(), wire.TypeInvocationRequested, req.Credential, req)
	if err != nil {
		return pending, err
	}
	ev.ID = s.waiters.ids.rerun(a.InvocationID)
	var ch chan wire.Receipt
	if wait {
		// The first run's pending receipt may still be on its way to the held
		// caller's waiter: it is not this wait's answer.
		ch = s.waiters.addFinal(a.InvocationID)
	}
	actx, cancel := context.WithTimeout(ctx, receiptAckWait)
	_, err = s.cfg.Log.Append(actx, wire.RequestSubject(a.Key), ev)
	cancel()
	if err != nil || !wait {
		if wait {
			s.waiters.remove(a.InvocationID, ch)
		}
		return pending, err
	}
	rc, err := s.await(ctx, 0, &req, ch, nil, nil)
	if err != nil {
		rc.Actor = a.Actor // pending: still the held caller's call
	}
	return rc, err
}

// rerunCredential is the credential an approved call is appended again with. It
// is never the owner's: a bus client's request is its client's (nats:<CLIENT>,
// from its subject), whatever it claimed; any other keeps what it said.
func rerunCredential(credential, subject string) string {
	if subj := wire.ParseSubject(subject); subj.Family == wire.BusRequestFamily {
		return wire.ClientActor(subj.Client)
	}
	if credential == wire.OwnerActor {
		return wire.BearerCredential // never reached: the owner's calls are never held
	}
	return credential
}

// rerunClient is the bus client whose approved call a re-run is, from the
// credential rerunCredential gave it (capdir's own attestation, on its own
// subject): its receipt is announced on that client's notice subject, as the
// first run's would have been. "" for a call that did not come over the bus.
func rerunClient(credential string) string {
	if c, ok := strings.CutPrefix(credential, wire.ClientActor("")); ok && wire.ValidClientName(c) {
		return c
	}
	return ""
}

// subjectClient is the bus client a request's subject names; "" for another.
func subjectClient(subject string) string {
	if subj := wire.ParseSubject(subject); subj.Family == wire.BusRequestFamily {
		return subj.Client
	}
	return ""
}

// decisionReceipt stores the receipt of a call that did not run because of its
// approval (r: denied or expired), under the invocation's receipt event id, and
// wakes a caller of this node waiting for it. It keeps the call's body (or
// arguments object) when the
// request is still in the log; its input fingerprint is the request's either way.
func (s *Service) decisionReceipt(ctx context.Context, a *projector.Approval, r *gate.Refusal) (wire.Receipt, error) {
	req := wire.InvocationRequest{InvocationID: a.InvocationID, Trace: a.Trace, Key: a.Key}
	client := "" // the bus client that asked, told on its notice subject
	held, subject, err := s.heldRequest(ctx, a)
	if err == nil {
		req.Body, req.Args = held.Body, held.Args
		client = subjectClient(subject)
	}
	now := s.cfg.Clock()
	d := newDraft(&req, a.Actor, s.cfg.Name, now)
	if g := s.cfg.Projector.Gate(a.Key, ""); g.RowErr == nil {
		d.row(g.Row, g.Fingerprint, g.Seq)
	}
	d.refuse(r.Status, r.Literal, nil)
	rc := d.finish(now, s.cfg.ResultCap, s.receiptBudget)
	if err != nil { // the request is gone from the log: the approval's record of its input
		rc.Fingerprints.Input = a.BodyFingerprint
	}
	if err := s.storeReceipt(ctx, &rc, client, false); err != nil {
		return rc, err
	}
	s.cfg.Metrics.receipt(&rc)
	s.waiters.deliver(&rc)
	return rc, nil
}

// startSweeper runs the approval sweeper until ctx ends (the service's run
// context, cancelled when it stops).
func (s *Service) startSweeper(ctx context.Context) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.Approvals.Sweep)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sweep(ctx)
			}
		}
	}()
}

// sweep expires the approvals past their expiry and mends the decisions whose
// receipt is missing. Every node sweeps; the log lets one decision land per
// approval and stores one receipt per invocation.
func (s *Service) sweep(ctx context.Context) {
	now := s.cfg.Clock()
	pending, err := s.cfg.Projector.PendingApprovals()
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: approval sweep: pending approvals unreadable", "err", err)
	}
	for i := range pending {
		if a := &pending[i]; a.ExpiredAt(now) {
			s.expire(ctx, a, now)
		}
	}
	decided, err := s.cfg.Projector.ApprovalsDecidedSince(now.Add(-approvalMendFor))
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: approval sweep: decided approvals unreadable", "err", err)
	}
	settled := false
	for i := range decided {
		a := &decided[i]
		if now.Sub(a.DecidedAt) < approvalMendAfter || s.hasReceipt(a.InvocationID) {
			continue
		}
		if !settled {
			// The receipt may be in the log and not yet folded here.
			sctx, cancel := s.cfg.Projector.WaitContext(ctx)
			err := s.cfg.Projector.Settle(sctx, wire.DataStream)
			cancel()
			if err != nil {
				return
			}
			settled = true
			if s.hasReceipt(a.InvocationID) {
				continue
			}
		}
		s.mend(ctx, a, now)
	}
}

func (s *Service) hasReceipt(inv string) bool {
	_, _, err := s.cfg.Projector.Receipt(inv)
	return err == nil
}

// expire appends the decision expire on an approval past its expiry and stores
// its receipt. A decision that landed first (the owner's, another node's expiry)
// leaves it to that decision.
func (s *Service) expire(ctx context.Context, a *projector.Approval, now time.Time) {
	_, err := s.appendDecision(ctx, a, wire.DecisionExpire, "engine:"+s.cfg.Name, now)
	if errors.Is(err, eventlog.ErrConflict) {
		return
	}
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: approval expiry not appended; next sweep", "invocation", a.InvocationID, "err", err)
		return
	}
	if _, err := s.decisionReceipt(ctx, a, gate.ApprovalExpiredRefusal()); err != nil {
		s.cfg.Logger.Warn("dispatcher: expired approval's receipt not stored; a sweep mends it", "invocation", a.InvocationID, "err", err)
	}
}

// mend finishes a decision whose receipt is missing: a deny's or an expiry's
// receipt, or an approval's re-run while it may be appended again.
func (s *Service) mend(ctx context.Context, a *projector.Approval, now time.Time) {
	var err error
	switch a.Decision {
	case wire.DecisionDeny:
		_, err = s.decisionReceipt(ctx, a, gate.ApprovalDeniedRefusal())
	case wire.DecisionExpire:
		_, err = s.decisionReceipt(ctx, a, gate.ApprovalExpiredRefusal())
	case wire.DecisionApprove:
		if now.Sub(a.DecidedAt) >= approvalRerunUntil {
			return
		}
		var orig wire.InvocationRequest
		var subject string
		if orig, subject, err = s.heldRequest(ctx, a); err == nil {
			_, err = s.runApproved(ctx, a, &orig, subject, false)
		}
	}
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: approval not mended; next sweep", "invocation", a.InvocationID, "decision", a.Decision, "err", err)
	}
}
