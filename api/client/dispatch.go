package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/capdir/capdir/api/answer"
)

// Dispatch invokes a row (POST /api/dispatch) and waits for its result, up to the
// server's wait; past it the result is Pending with the invocation id. A key no
// row has is an *Error with Status 404 whose Body is the refusal, did_you_mean and
// the refusal's invocation_id included. With req.Token the call is the token
// holder's: a refusal for what the token does not permit is an *Error with Status
// 401, 403, 409 or 413 and the literal reason as Message; arguments the row's
// input_schema refuses are an *Error with Status 400.
func (c *Client) Dispatch(ctx context.Context, req DispatchRequest) (DispatchResult, error) {
	var raw json.RawMessage
	if _, err := c.doAs(ctx, req.Token, http.MethodPost, "/api/dispatch", req, &raw); err != nil {
		return DispatchResult{}, err
	}
	return decodeDispatch(raw)
}

// Outcome is the answer to the call inv as Dispatch would have given it (GET
// /api/dispatch?receipt=), for the owner or, with tok, the token holder who made
// it: with wait (up to the server's dispatch wait) it waits that long for the
// receipt first. While the call waits for the owner's approval (Status
// PENDING_APPROVAL) or runs, the result is Pending; another caller's call is an
// *Error with Status 404.
func (c *Client) Outcome(ctx context.Context, inv string, wait time.Duration, tok string) (DispatchResult, error) {
	q := url.Values{"receipt": {inv}}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var raw json.RawMessage
	if _, err := c.doAs(ctx, tok, http.MethodGet, "/api/dispatch?"+q.Encode(), nil, &raw); err != nil {
		return DispatchResult{}, err
	}
	return decodeDispatch(raw)
}

// decodeDispatch decodes a dispatch's answer, keeping it whole in Raw.
func decodeDispatch(raw json.RawMessage) (DispatchResult, error) {
	var res DispatchResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return DispatchResult{}, err
	}
	res.Raw = raw
	return res, nil
}

// Receipt is an invocation's whole receipt (GET /api/receipts/{id}), arguments and
// result included; ErrPending while it has none yet.
func (c *Client) Receipt(ctx context.Context, id string) (answer.Receipt, error) {
	var rc answer.Receipt
	status, err := c.do(ctx, http.MethodGet, "/api/receipts/"+url.PathEscape(id), nil, &rc)
	if err == nil && status == http.StatusAccepted {
		return answer.Receipt{}, ErrPending
	}
	return rc, err
}

// Receipts lists a key's receipts, newest first; limit 0 means the server's
// default (100).
func (c *Client) Receipts(ctx context.Context, key string, limit int) ([]answer.Receipt, error) {
	q := url.Values{"key": {key}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Receipts []answer.Receipt `json:"receipts"`
	}
	_, err := c.do(ctx, http.MethodGet, "/api/receipts?"+q.Encode(), nil, &out)
	return out.Receipts, err
}

// PublicReceipt is the keyless view of a receipt (GET /receipt/{id}): how the call
// ended, the contract fingerprint, and the input and output fingerprints keyed with
// the salt only Receipt shows; ErrPending while it has none yet.
func (c *Client) PublicReceipt(ctx context.Context, id string) (answer.PublicReceipt, error) {
	var rc answer.PublicReceipt
	status, err := c.do(ctx, http.MethodGet, "/receipt/"+url.PathEscape(id), nil, &rc)
	if err == nil && status == http.StatusAccepted {
		return answer.PublicReceipt{}, ErrPending
	}
	return rc, err
}
