package console

import (
	"errors"
	"net/http"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
)

func (c *Console) registerApprovals() {
	c.mux.HandleFunc("GET /console/approvals", c.page(c.approvalsPage))
	c.mux.HandleFunc("POST /console/approvals/{id}", c.change(c.decide))
}

// approvalsShown bounds the approvals page.
const approvalsShown = 200

// approvalsPage lists the calls waiting for the owner's decision, live, as GET
// /api/approvals does.
func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	list, err := c.cmd.Approvals().List(r.Context(), approvalsShown)
	if err != nil {
		return err
	}
	c.render(w, "approvals", http.StatusOK, view{Title: "Approvals", Nav: "approvals", CSRF: ss.csrf, Notice: ss.notice, Data: list})
	return nil
}

// decide carries out the owner's decision through the approval path POST
// /api/approvals/{id} uses: the waiting caller gets its answer at once.
func (c *Console) decide(w http.ResponseWriter, r *http.Request, ss *session) error {
	id := r.PathValue("id")
	decision := r.PostFormValue("decision")
	rc, err := c.cmd.Approvals().Decide(r.Context(), id, decision)
	switch {
	case errors.Is(err, dispatcher.ErrPending):
		c.done(w, r, ss, "/console/approvals", "Approved "+id+"; the call is still running: its receipt will show under Receipts.")
	case err != nil:
		return err
	case decision == wire.DecisionDeny:
		c.done(w, r, ss, "/console/approvals", "Denied "+id+": "+rc.Status+".")
	default:
		c.done(w, r, ss, "/console/approvals", "Approved "+id+": "+rc.Status+".")
	}
	return nil
}
