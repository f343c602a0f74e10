package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/capdir/capdir/api/answer"
)

// Approval is a token holder's call to a sensitive row that the watcher held for
// the owner's decision, as the owner sees it, the call's body included.
type Approval = answer.Approval

// Decision is the outcome of DecideApproval: the receipt's status once there is
// one (the denial's, or the approved call's), else Pending while the call runs.
type Decision struct {
	OK           bool   `json:"ok"`
	Decision     string `json:"decision"`
	InvocationID string `json:"invocation_id"`
	Receipt      string `json:"receipt"`
	Pending      bool   `json:"pending,omitempty"`
	Status       string `json:"status,omitempty"`
	Ran          bool   `json:"ran"`
}

// Approvals lists the calls waiting for the owner's decision now, oldest first
// (GET /api/approvals); limit 0 means the server's default (100).
func (c *Client) Approvals(ctx context.Context, limit int) ([]Approval, error) {
	path := "/api/approvals"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	_, err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Approvals, err
}

// Approval is one held call, in whatever state (GET /api/approvals/{id}); an
// unknown id is an *Error with Status 404.
func (c *Client) Approval(ctx context.Context, id string) (Approval, error) {
	var a Approval
	_, err := c.do(ctx, http.MethodGet, "/api/approvals/"+url.PathEscape(id), nil, &a)
	return a, err
}

// DecideApproval approves ("approve") or denies ("deny") a held call (POST
// /api/approvals/{id}). A decided call is an *Error with Status 409
// (approval_decided), an expired one 410, an unknown id 404.
func (c *Client) DecideApproval(ctx context.Context, id, decision string) (Decision, error) {
	var d Decision
	_, err := c.do(ctx, http.MethodPost, "/api/approvals/"+url.PathEscape(id), map[string]string{"decision": decision}, &d)
	return d, err
}
