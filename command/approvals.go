package command

import (
	"context"
	"errors"
	"time"

	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Approvals lists the calls the watcher held for the owner's approval and
// carries out the owner's decisions on them, through the Config's Approver (the
// dispatch service). Without one every method is ErrNoDispatcher. Safe for
// concurrent use.
type Approvals struct {
	cfg Config
}

// Approval states as the owner sees them.
const (
	approvalPending  = "pending"
	approvalApproved = "approved"
	approvalDenied   = "denied"
	approvalExpired  = "expired"
)

// approvalState names a's state at now.
func approvalState(a *projector.Approval, now time.Time) string {
	switch {
	case a.ExpiredAt(now):
		return approvalExpired
	case a.Decision == wire.DecisionApprove:
		return approvalApproved
	case a.Decision == wire.DecisionDeny:
		return approvalDenied
	}
	return approvalPending
}

// ApprovalPath is where the owner decides on the held call inv.
func ApprovalPath(inv string) string { return "/api/approvals/" + inv }

// Served is nil when this node decides approvals, else ErrNoDispatcher.
func (p *Approvals) Served() error {
	_, err := p.approver()
	return err
}

// approver is the dispatch service's approval side, or ErrNoDispatcher.
func (p *Approvals) approver() (Approver, error) {
	if p.cfg.Approver == nil {
		return nil, ErrNoDispatcher
	}
	return p.cfg.Approver, nil
}

// view is a as the owner sees it now.
func (p *Approvals) view(ctx context.Context, ap Approver, a *projector.Approval) answer.Approval {
	v := answer.Approval{InvocationID: a.InvocationID, Key: a.Key, Trace: a.Trace, Actor: a.Actor, State: approvalState(a, p.cfg.Clock()),
		BodyFingerprint: a.BodyFingerprint, RequestedAt: a.RequestedAt, ExpiresAt: a.ExpiresAt, DecidedBy: a.DecidedBy,
		Receipt: "/api/receipts/" + a.InvocationID}
	if a.Decided() {
		at := a.DecidedAt
		v.DecidedAt = &at
	}
	if v.State == approvalPending {
		v.Decide = ApprovalPath(a.InvocationID)
	}
	body, err := ap.ApprovalBody(ctx, a)
	if err != nil {
		v.BodyError = err.Error()
	} else {
		v.Body = &body
	}
	return v
}

// List is up to limit calls waiting for the owner's decision now, oldest first,
// once this node has folded the control stream as the log holds it: GET
// /api/approvals and the console both list them here. Errors: ErrNoDispatcher,
// ErrUnavailable.
func (p *Approvals) List(ctx context.Context, limit int) ([]answer.Approval, error) {
	ap, err := p.approver()
	if err != nil {
		return nil, err
	}
	p.settle(ctx) // approvals requested or decided through another node are listed
	pending, err := p.cfg.Projector.PendingApprovals()
	if err != nil {
		return nil, NewError(ErrUnavailable, "approvals unavailable: %w", err)
	}
	out := []answer.Approval{}
	now := p.cfg.Clock()
	for i := range pending {
		if pending[i].ExpiredAt(now) || len(out) == limit {
			continue
		}
		out = append(out, p.view(ctx, ap, &pending[i]))
	}
	return out, nil
}

// settle waits until this node has folded the control stream as the log holds it
// now, at most the projection wait; when the log cannot be asked in time the list
// is answered from the projection as it is.
func (p *Approvals) settle(ctx context.Context) {
	wait, cancel := p.cfg.Projector.WaitContext(ctx) // the projection wait (projector.Settings.Wait)
	defer cancel()
	if err := p.cfg.Projector.Settle(wait, wire.ControlStream); err != nil && ctx.Err() == nil {
		p.cfg.Logger.Warn("command: approvals listed before the projection caught up", "err", err)
	}
}

// Get is the approval of invocation id, in whatever state: GET
// /api/approvals/{id} answers it. Errors: an *ApprovalError (unknown:
// dispatcher.ErrApprovalUnknown), or ErrNoDispatcher.
func (p *Approvals) Get(ctx context.Context, id string) (answer.Approval, error) {
	ap, err := p.approver()
	if err != nil {
		return answer.Approval{}, err
	}
	a, err := ap.LookupApproval(ctx, id)
	if err != nil {
		return answer.Approval{}, &ApprovalError{Inv: id, Err: err}
	}
	return p.view(ctx, ap, &a), nil
}

// Decide records and carries out the owner's decision (wire.DecisionApprove or
// DecisionDeny) on invocation id, waiting at most the Config's DecideWait: POST
// /api/approvals/{id} and the console both decide here. It returns the denial's
// receipt, or the approved call's once it ran; dispatcher.ErrPending when the
// approved call runs on past the wait. Other errors are an *ApprovalError
// (decided, expired, unknown) or ErrNoDispatcher.
func (p *Approvals) Decide(ctx context.Context, id, decision string) (wire.Receipt, error) {
	ap, err := p.approver()
	if err != nil {
		return wire.Receipt{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DecideWait)
	defer cancel()
	rc, err := ap.DecideApproval(ctx, id, decision, wire.OwnerActor)
	if err != nil && !errors.Is(err, dispatcher.ErrPending) {
		return rc, &ApprovalError{Inv: id, Err: err}
	}
	return rc, err
}
