package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// A caller's wait for its own call: GET /api/dispatch?receipt=inv_…[&wait=30s]
// answers a call that did not finish within its dispatch (held for the owner's
// approval, or still running) as its dispatch would have been answered. The owner
// may read any call this way; a token holder only the calls made with its token's
// subject (the receipts' actor token:<sub>), so it needs no owner-only route, and
// only those the token it presents now could make (dispatcher.Service.MayRead).

// waitPath is where the caller of invocation inv waits for its outcome.
func (s *Server) waitPath(inv string) string { return WaitPath(inv, s.cfg.DispatchWait) }

// WaitPath is the route where the caller of invocation inv, owner or token
// holder, waits up to wait for its outcome with the credential it called with:
// GET /api/dispatch?receipt=inv_…&wait=…. Other entry points (MCP) name it too.
func WaitPath(inv string, wait time.Duration) string {
	return "/api/dispatch?" + url.Values{"receipt": {inv}, "wait": {wait.String()}}.Encode()
}

// runningAnswer is a dispatch's 202 when its receipt did not come within the
// dispatch wait: the call runs on.
func (s *Server) runningAnswer(inv, trace string) map[string]any {
	return map[string]any{
		"ok": nil, "pending": true, "trace": trace, "invocation_id": inv,
		"receipt": "/api/receipts/" + inv, "wait": s.waitPath(inv),
	}
}

// dispatchReceipt answers the call inv for the owner or the token holder who
// made it, waiting up to ?wait= for its receipt: 200 with its result and proof,
// its refusal, or 202 while it waits for the owner's approval or runs. Another
// caller's call is answered as an unknown id (404).
func (s *Server) dispatchReceipt(w http.ResponseWriter, r *http.Request, inv string) error {
	tok, claims, err := s.caller(r)
	if err != nil {
		return err
	}
	if inv == "" {
		return badRequest("receipt needs the invocation id of a call: GET /api/dispatch?receipt=inv_…&wait=" + s.cfg.DispatchWait.String())
	}
	wait, err := s.waitParam(r)
	if err != nil {
		return err
	}
	if s.cfg.Dispatcher == nil {
		return ErrNoDispatcher
	}
	rc, pending, err := s.receipt(r, inv, false)
	if err != nil {
		return err
	}
	if pending {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		rc, err = s.cfg.Dispatcher.Await(ctx, inv)
		cancel()
		if errors.Is(err, dispatcher.ErrPending) {
			return s.stillPending(w, r, inv, tok, claims)
		}
		if err != nil {
			return newError(ErrUnavailable, "%w", err)
		}
	}
	if !madeBy(claims, rc.Actor) {
		return &receiptNotFound{id: inv}
	}
	if err := s.mayRead(r, tok, claims, &rc); err != nil {
		return err
	}
	return s.answer(w, &rc)
}

// mayRead is nil when the caller claims name (nil: the owner) may have rc, a
// call its subject made, now: a token holder only if the token tok it presents
// could make the call (dispatcher.Service.MayRead), else the refusal a fresh
// call gets.
func (s *Server) mayRead(r *http.Request, tok string, claims *token.Claims, rc *wire.Receipt) error {
	if claims == nil {
		return nil
	}
	var repeat *dispatcher.RefusedError
	switch err := s.cfg.Dispatcher.MayRead(r.Context(), tok, rc); {
	case errors.Is(err, dispatcher.ErrCallWithheld):
		return &receiptNotFound{id: rc.InvocationID} // a refusal would quote another token's arguments
	case errors.As(err, &repeat):
		return repeatRefused(rc.Key, repeat)
	}
	return nil
}

// stillPending answers a call with no receipt yet: held for the owner's
// approval (the caller's own only, and only while its token could make the
// call), else running.
func (s *Server) stillPending(w http.ResponseWriter, r *http.Request, inv, tok string, claims *token.Claims) error {
	if ap, ok := s.cfg.Dispatcher.(command.Approver); ok {
		a, err := ap.LookupApproval(r.Context(), inv)
		if err == nil && claims != nil && madeBy(claims, a.Actor) {
			body, _ := ap.ApprovalBody(r.Context(), &a) // "" when the log no longer holds it
			if err := s.mayRead(r, tok, claims, &wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: a.Key}, Body: body}); err != nil {
				return err
			}
		}
		switch {
		case err == nil && !madeBy(claims, a.Actor):
			return &receiptNotFound{id: inv}
		case err == nil && !a.Decided():
			writeJSON(w, http.StatusAccepted, s.pendingApprovalAnswer(inv, a.Trace))
			return nil
		case err == nil:
			writeJSON(w, http.StatusAccepted, s.runningAnswer(inv, a.Trace))
			return nil
		}
	}
	// Not held (yet): whose call it is shows with its receipt, the id alone is
	// public (GET /api/dispatch?confirm=).
	writeJSON(w, http.StatusAccepted, map[string]any{"ok": nil, "pending": true, "invocation_id": inv, "wait": s.waitPath(inv)})
	return nil
}

// madeBy reports whether the caller claims name (nil: the owner) made the call
// whose actor is actor.
func madeBy(claims *token.Claims, actor string) bool {
	return claims == nil || actor == wire.TokenActor(claims.Subject)
}

// waitParam is ?wait=: 0 when absent, else a duration of 0 or more; one longer
// than the dispatch wait waits the dispatch wait (the server's write timeout
// allows no more).
func (s *Server) waitParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, badRequest("wait must be a duration of 0s or more, such as " + s.cfg.DispatchWait.String() + " (at most " + s.cfg.DispatchWait.String() + " is waited)")
	}
	return min(d, s.cfg.DispatchWait), nil
}
