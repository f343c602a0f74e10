package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Approver is what the approval routes need from the dispatch service, beside
// Dispatcher: the owner's decisions on calls the watcher held, and the held call's
// body. A Dispatcher that is not an Approver serves no approval (503).
type Approver interface {
	// LookupApproval is an invocation's approval (dispatcher.ErrApprovalUnknown
	// when there is none).
	LookupApproval(ctx context.Context, inv string) (projector.Approval, error)
	// DecideApproval records and carries out the owner's decision, approve or
	// deny: see dispatcher.Service.DecideApproval.
	DecideApproval(ctx context.Context, inv, decision, by string) (wire.Receipt, error)
	// ApprovalBody is the held call's body, read back from the log.
	ApprovalBody(ctx context.Context, a *projector.Approval) (string, error)
}

// registerApprovals adds the approval routes, all the owner's:
//
//	GET  /api/approvals       the calls waiting for a decision (?limit=, default 100)
//	GET  /api/approvals/{id}  one approval, in whatever state
//	POST /api/approvals/{id}  {"decision":"approve"|"deny"}: append APPROVAL_DECIDED
//	                          and carry it out (409 decided, 410 expired, 404 unknown)
func (s *Server) registerApprovals() {
	s.handle("GET /api/approvals", s.owner(s.approvalList))
	s.handle("GET /api/approvals/{id}", s.owner(s.approvalGet))
	s.handle("POST /api/approvals/{id}", s.owner(s.approvalDecide))
}

// ApprovalView is one approval as the owner sees it (answer.Approval).
type ApprovalView = answer.Approval

// approver is the dispatch service's approval side, or ErrNoDispatcher.
func (s *Server) approver() (Approver, error) {
	if ap, ok := s.cfg.Dispatcher.(Approver); ok {
		return ap, nil
	}
	return nil, ErrNoDispatcher
}

// approvalView is a as the owner sees it now.
func (s *Server) approvalView(ctx context.Context, ap Approver, a *projector.Approval) ApprovalView {
	v := ApprovalView{InvocationID: a.InvocationID, Key: a.Key, Trace: a.Trace, Actor: a.Actor, State: approvalState(a, s.cfg.Clock()),
		BodyFingerprint: a.BodyFingerprint, RequestedAt: a.RequestedAt, ExpiresAt: a.ExpiresAt, DecidedBy: a.DecidedBy,
		Receipt: "/api/receipts/" + a.InvocationID}
	if a.Decided() {
		at := a.DecidedAt
		v.DecidedAt = &at
	}
	if v.State == approvalPending {
		v.Decide = approvalPath(a.InvocationID)
	}
	body, err := ap.ApprovalBody(ctx, a)
	if err != nil {
		v.BodyError = err.Error()
	} else {
		v.Body = &body
	}
	return v
}

// approvalList answers {"approvals":[…]}: the calls waiting for a decision now,
// oldest first.
func (s *Server) approvalList(w http.ResponseWriter, r *http.Request) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	out, err := s.Approvals(r.Context(), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
	return nil
}

// Approvals are up to limit calls waiting for the owner's decision now, oldest
// first, once this node has folded the control stream as the log holds it: GET
// /api/approvals and the console both list them here. Errors: ErrNoDispatcher,
// ErrUnavailable.
func (s *Server) Approvals(ctx context.Context, limit int) ([]ApprovalView, error) {
	ap, err := s.approver()
	if err != nil {
		return nil, err
	}
	s.settleCtx(ctx, wire.ControlStream, "approvals") // approvals requested or decided through another node are listed
	pending, err := s.cfg.Projector.PendingApprovals()
	if err != nil {
		return nil, newError(ErrUnavailable, "approvals unavailable: %w", err)
	}
	out := []ApprovalView{}
	now := s.cfg.Clock()
	for i := range pending {
		if pending[i].ExpiredAt(now) || len(out) == limit {
			continue
		}
		out = append(out, s.approvalView(ctx, ap, &pending[i]))
	}
	return out, nil
}

// approvalGet answers one approval's ApprovalView.
func (s *Server) approvalGet(w http.ResponseWriter, r *http.Request) error {
	ap, err := s.approver()
	if err != nil {
		return err
	}
	a, err := ap.LookupApproval(r.Context(), r.PathValue("id"))
	if err != nil {
		return &approvalError{inv: r.PathValue("id"), err: err}
	}
	writeJSON(w, http.StatusOK, s.approvalView(r.Context(), ap, &a))
	return nil
}

// maxDecisionBody bounds POST /api/approvals/{id}'s body.
const maxDecisionBody = 1 << 10

// approvalDecide records the owner's decision and answers with the outcome: the
// denial's receipt, or the approved call's once it ran (202 while it runs on past
// the dispatch wait).
func (s *Server) approvalDecide(w http.ResponseWriter, r *http.Request) error {
	_, err := s.approver()
	if err != nil {
		return err
	}
	var in struct {
		Decision string `json:"decision"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxDecisionBody))
	dec.DisallowUnknownFields()
	err = dec.Decode(&in)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		return badRequest("malformed body (" + strings.TrimPrefix(err.Error(), "json: ") + "); " + decisionShapeHint)
	}
	if in.Decision != wire.DecisionApprove && in.Decision != wire.DecisionDeny {
		return badRequest(fmt.Sprintf("decision %q is neither approve nor deny; %s", in.Decision, decisionShapeHint))
	}
	id := r.PathValue("id")
	rc, err := s.Decide(r.Context(), id, in.Decision)
	switch {
	case errors.Is(err, dispatcher.ErrPending):
		writeJSON(w, http.StatusAccepted, decisionAnswer(in.Decision, id, nil))
	case err != nil:
		return err
	default:
		writeJSON(w, http.StatusOK, decisionAnswer(in.Decision, id, &rc))
	}
	return nil
}

// Decide records and carries out the owner's decision (wire.DecisionApprove or
// DecisionDeny) on invocation id, waiting at most the dispatch wait: POST
// /api/approvals/{id} and the console both decide here. It returns the denial's
// receipt, or the approved call's once it ran; dispatcher.ErrPending when the
// approved call runs on past the wait. Other errors are an approval's (decided,
// expired, unknown: see the error table) or ErrNoDispatcher.
func (s *Server) Decide(ctx context.Context, id, decision string) (wire.Receipt, error) {
	ap, err := s.approver()
	if err != nil {
		return wire.Receipt{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DispatchWait)
	defer cancel()
	rc, err := ap.DecideApproval(ctx, id, decision, OwnerActor)
	if err != nil && !errors.Is(err, dispatcher.ErrPending) {
		return rc, &approvalError{inv: id, err: err}
	}
	return rc, err
}
