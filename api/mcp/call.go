package mcp

import (
	"context"
	"errors"
	"strings"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Proof is what a tool result says of its receipt, in structuredContent's
// "proof" (the fields of POST /api/dispatch's proof, with the trace).
type Proof struct {
	OK            bool   `json:"ok"`
	Ran           bool   `json:"ran"`
	Status        string `json:"status"`
	InvocationID  string `json:"invocation_id"`
	Trace         string `json:"trace"`
	PublicReceipt string `json:"public_receipt"`
}

// CallResult is a tool result's structuredContent: the result text (a literal
// refusal or an ERR: string when isError) and the proof.
type CallResult struct {
	Result string `json:"result"`
	Proof  Proof  `json:"proof"`
}

// Meta keys of a tool result.
const (
	MetaInvocationID = "capdir/invocation_id"
	MetaStatus       = "capdir/status"
)

// invoke dispatches key with in for c, as POST /api/dispatch does for the same
// credential (the same request event, gate, input checks and receipt), and
// answers the receipt as a tool result. A refusal or an ERR: result is a tool
// error whose text is the literal.
func (h *Handler) invoke(ctx context.Context, c caller, req *sdk.CallToolRequest, key string, in runner.Input) *sdk.CallToolResult {
	idem, err := idempotencyKey(req)
	if err != nil {
		return toolError(err.Error())
	}
	ctx, sp := h.traceCall(ctx, req, key)
	defer sp.End()
	var rc wire.Receipt
	if idem != "" {
		ictx, cancel := context.WithTimeout(ctx, h.cfg.DispatchWait)
		rc, err = h.cfg.Dispatcher.InvokeOnce(ictx, c.request(key, in), dispatcher.Idempotency{Actor: c.actor, Key: idem})
		cancel()
	} else {
		rc, err = h.cfg.Dispatcher.InvokeWait(ctx, c.request(key, in), h.cfg.DispatchWait)
	}
	var repeat *dispatcher.RefusedError
	switch {
	case errors.As(err, &repeat):
		return toolError(repeat.Reason) // the literal a fresh call gets; no receipt was written
	case errors.Is(err, dispatcher.ErrPending):
		res := h.result(&rc, pendingText(rc.InvocationID, h.cfg.DispatchWait, h.waitPath(rc.InvocationID)))
		res.IsError = true
		return res
	case err == nil && rc.Status == wire.StatusPendingApproval:
		res := h.result(&rc, heldText(rc.InvocationID, h.waitPath(rc.InvocationID)))
		res.IsError = true
		return res
	case errors.Is(err, dispatcher.ErrPayloadTooLarge):
		return toolError(err.Error() + "; send less, or pass large data by reference")
	case errors.Is(err, dispatcher.ErrIdempotencyKeyReused):
		return toolError(err.Error() + "; send this call under a new Idempotency-Key")
	case err != nil:
		return toolError(err.Error()) // a malformed key (Invoke checks it), or the log failed
	}
	return h.result(&rc, rc.Result)
}

// waitPath is where inv's caller waits for its outcome, "" when not configured.
func (h *Handler) waitPath(inv string) string {
	if h.cfg.WaitPath == nil {
		return ""
	}
	return h.cfg.WaitPath(inv)
}

// result is a receipt as a tool result: text (the result, or the literal the
// gate or runner wrote), then a line naming the receipt; the same in
// structuredContent; the invocation id and status in _meta.
func (h *Handler) result(rc *wire.Receipt, text string) *sdk.CallToolResult {
	p := Proof{
		OK: rc.OK, Ran: rc.Ran, Status: rc.Status, InvocationID: rc.InvocationID, Trace: rc.Trace,
		PublicReceipt: strings.TrimRight(h.cfg.PublicURL, "/") + "/receipt/" + rc.InvocationID,
	}
	status := p.Status
	if status == "" {
		status = "PENDING"
	}
	return &sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: text},
			&sdk.TextContent{Text: "invocation_id: " + p.InvocationID + " · " + status + " · receipt: " + p.PublicReceipt},
		},
		StructuredContent: CallResult{Result: text, Proof: p},
		IsError:           !rc.OK,
		Meta:              sdk.Meta{MetaInvocationID: p.InvocationID, MetaStatus: status},
	}
}

// toolError is a tool error that has no receipt: nothing was appended.
func toolError(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true}
}

// IdempotencyHeader names the header that makes a tools/call run once however
// often it is sent, as on POST /api/dispatch.
const IdempotencyHeader = "Idempotency-Key"

// idempotencyKey is the Idempotency-Key of the HTTP request that carried req ("":
// none), or an error matching dispatcher.ErrBadIdempotencyKey that says what to
// send.
func idempotencyKey(req *sdk.CallToolRequest) (string, error) {
	if req == nil || req.Extra == nil {
		return "", nil
	}
	return dispatcher.IdempotencyKeyOf(req.Extra.Header.Values(IdempotencyHeader))
}
