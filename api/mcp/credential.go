package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// caller is who presented the credential of a request: the owner, or the holder
// of a capability token that holds (checked as the gate checks who the caller is).
type caller struct {
	// viewer is what the credential may see and call (contract.Viewer: the gate's
	// scope and risk ceiling, as the registry and the documents apply them).
	viewer contract.Viewer
	// token is the raw capability token; empty for the owner.
	token string
	// id is what a session is bound to: "owner", or "token:" and the token's
	// SHA-256. The token itself is never a map key or a log field.
	id string
	// expiry is the token's expiry; zero for the owner.
	expiry time.Time
	// actor is who the receipts name (wire.OwnerActor, or wire.TokenActor of the
	// token's subject): an Idempotency-Key is this caller's alone.
	actor string
}

// request is the invocation request this caller's tools/call appends: the
// owner's attested by capdir, a token holder's carrying its token for the gate,
// as the HTTP facade builds them.
func (c caller) request(key string, in runner.Input) wire.InvocationRequest {
	req := wire.InvocationRequest{Key: key, Body: in.Body, Args: in.Args, Credential: wire.OwnerActor}
	if c.token != "" {
		req.Credential, req.Token = wire.MCPBearerCredential, c.token
	}
	return req
}

// authenticate reads the request's credential: the owner key in x-terminal-key,
// or a capability token as Authorization: Bearer. It answers nil for a caller
// that holds, else the HTTP refusal; nothing of the body has been read.
func (h *Handler) authenticate(r *http.Request) (caller, *httpAnswer) {
	key, auth := r.Header.Get("x-terminal-key"), r.Header.Get("Authorization")
	switch {
	case key != "" && auth != "":
		return caller{}, &answerBothCredentials
	case key != "":
		var te *ownerkey.ThrottledError
		if err := h.cfg.OwnerKey.Check(r, key); errors.As(err, &te) {
			a := answerThrottled(te)
			return caller{}, &a
		} else if err != nil {
			return caller{}, &answerNoCredential
		}
		return caller{viewer: contract.Owner(), id: "owner", actor: wire.OwnerActor}, nil
	case auth == "":
		return caller{}, &answerNoCredential
	}
	tok, ok := token.FromAuthorization(auth)
	if !ok {
		return caller{}, &answerMalformedAuthorization
	}
	claims, refusal := h.cfg.Dispatcher.Caller(tok)
	if refusal != nil {
		a := answerTokenRefused(refusal.Literal, refusal.Status)
		return caller{}, &a
	}
	sum := sha256.Sum256([]byte(tok))
	return caller{viewer: gate.Viewer(claims), token: tok, id: "token:" + hex.EncodeToString(sum[:]), expiry: claims.ExpiryTime(),
		actor: wire.TokenActor(claims.Subject)}, nil
}

// offers reports whether a session under v lists r: an enabled, planner-visible
// row that v may invoke (in its scope and within its risk ceiling; every row for
// the owner). Both modes list exactly these rows.
func offers(v contract.Viewer, r *contract.Row) bool {
	return r.PlannerVisible == 1 && v.Discovers(r) && v.MayInvoke(r)
}
