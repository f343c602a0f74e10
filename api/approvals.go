package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
)

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

// approvalList answers {"approvals":[…]}: the calls waiting for a decision now,
// oldest first.
func (s *Server) approvalList(w http.ResponseWriter, r *http.Request) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	out, err := s.cmd.Approvals().List(r.Context(), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
	return nil
}

// approvalGet answers one approval's answer.Approval.
func (s *Server) approvalGet(w http.ResponseWriter, r *http.Request) error {
	v, err := s.cmd.Approvals().Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// maxDecisionBody bounds POST /api/approvals/{id}'s body.
const maxDecisionBody = 1 << 10

// approvalDecide records the owner's decision and answers with the outcome: the
// denial's receipt, or the approved call's once it ran (202 while it runs on past
// the dispatch wait).
func (s *Server) approvalDecide(w http.ResponseWriter, r *http.Request) error {
	if err := s.cmd.Approvals().Served(); err != nil {
		return err
	}
	var in struct {
		Decision string `json:"decision"`
	}
	if err := decodeOne(http.MaxBytesReader(w, r.Body, maxDecisionBody), &in); err != nil {
		return badRequest("malformed body (" + strings.TrimPrefix(err.Error(), "json: ") + "); " + decisionShapeHint)
	}
	if in.Decision != wire.DecisionApprove && in.Decision != wire.DecisionDeny {
		return badRequest(fmt.Sprintf("decision %q is neither approve nor deny; %s", in.Decision, decisionShapeHint))
	}
	id := r.PathValue("id")
	rc, err := s.cmd.Approvals().Decide(r.Context(), id, in.Decision)
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
