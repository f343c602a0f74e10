package command

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Tokens mints and revokes the deployment's capability tokens, as the owner.
// Minting appends nothing: a token is its own record, and the answer is the only
// copy of it; capdir never logs or stores a token it mints. Safe for concurrent
// use.
type Tokens struct {
	cfg Config
}

// MintRequest is what a capability token is minted from: POST /api/tokens's body.
type MintRequest struct {
	Sub        string      `json:"sub"`
	Scope      token.Scope `json:"scope"`
	Risk       string      `json:"risk"`
	Pin        string      `json:"pin"`
	Body       *string     `json:"body"`
	MaxPayload int         `json:"max_payload"`
	TTLSeconds int64       `json:"ttl_seconds"`
}

// MintAnswer is a minted token: POST /api/tokens's answer. Token is its only copy.
type MintAnswer struct {
	Token  string       `json:"token"`
	JTI    string       `json:"jti"`
	Exp    int64        `json:"exp"`
	Claims token.Claims `json:"claims"`
}

// Mint mints the token in asks for, as the owner: POST /api/tokens, the console
// and a Go program embedding capdir all mint here. Errors: ErrBadRequest saying what to fix, or ErrUnavailable.
func (t *Tokens) Mint(in MintRequest) (MintAnswer, error) {
	if in.TTLSeconds < 0 {
		return MintAnswer{}, badRequest(fmt.Sprintf("ttl_seconds %d is negative; leave it out for the default (%v)", in.TTLSeconds, token.DefaultTTL))
	}
	pin, err := t.resolvePin(in.Pin, in.Scope)
	if err != nil {
		return MintAnswer{}, err
	}
	ttl := time.Duration(min(in.TTLSeconds, math.MaxInt64/int64(time.Second))) * time.Second
	raw, c, err := t.cfg.Minter.Mint(token.MintRequest{
		Subject: in.Sub, Scope: in.Scope, Risk: in.Risk, Pin: pin, Body: in.Body, MaxPayload: in.MaxPayload, TTL: ttl,
	}, t.cfg.Clock())
	if err != nil {
		return MintAnswer{}, badRequest(err.Error())
	}
	t.cfg.Logger.Info("command: capability token minted", "jti", c.ID, "sub", c.Subject, "exp", c.ExpiryTime())
	return MintAnswer{Token: raw, JTI: c.ID, Exp: c.Expiry, Claims: c}, nil
}

// pinCurrent, as a mint request's pin, pins the current contract of the one key
// in the token's scope.
const pinCurrent = "current"

// resolvePin turns "current" into the fingerprint of the scope's one row. Errors:
// ErrBadRequest, or ErrUnavailable when the projection cannot be read.
func (t *Tokens) resolvePin(pin string, scope token.Scope) (string, error) {
	if pin != pinCurrent {
		return pin, nil
	}
	if len(scope.Keys) != 1 || len(scope.Categories) != 0 {
		return "", badRequest(`"pin":"current" pins the contract of the token's one key: give exactly one key in scope.keys and no category`)
	}
	row, _, err := t.cfg.Projector.Row(scope.Keys[0])
	if errors.Is(err, projector.ErrNotFound) {
		return "", badRequest(fmt.Sprintf(`"pin":"current": there is no row %q whose contract to pin`, scope.Keys[0]))
	}
	if err != nil {
		return "", NewError(ErrUnavailable, "%w", err)
	}
	return contract.Fingerprint(&row), nil
}

// Revoke appends TOKEN_REVOKED for the token id jti and returns once this node's
// projection has folded it: DELETE /api/tokens/{jti}, the console and a Go program
// embedding capdir all revoke here. Errors: ErrBadRequest for what is no token id, ErrUnavailable, or
// ErrNotVisible (written, not yet folded).
func (t *Tokens) Revoke(ctx context.Context, jti string) error {
	if !wire.ValidTokenID(jti) {
		return badRequest(fmt.Sprintf("%q is not a token id: give the jti POST /api/tokens answered (1 to %d characters of A-Z a-z 0-9 _ -)", jti, wire.MaxTokenIDLen))
	}
	if t.cfg.Projector.Revoked(jti) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.WriteTimeout)
	defer cancel()
	// Every token alive now expires before now + the longest lifetime (rounded up to
	// a whole second, as the minter rounds exp), give or take the clock skew a
	// verifier tolerates: past that the revocation need not be held.
	exp := t.cfg.Clock().Add(t.cfg.Minter.MaxTTL() + time.Second + token.MaxLeeway).Unix()
	ev, err := t.cfg.Log.NewEvent(wire.TypeTokenRevoked, wire.OwnerActor, wire.TokenRevoked{JTI: jti, Exp: exp})
	if err != nil {
		return NewError(ErrUnavailable, "revocation not written: %w", err)
	}
	seq, err := t.cfg.Log.Append(ctx, wire.TokenSubject(jti), ev)
	if err != nil {
		return NewError(ErrUnavailable, "revocation not written: %w", err)
	}
	if err := t.cfg.Projector.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		return NewError(ErrNotVisible,
			"revocation written to the log (sequence %d of %s) but not yet projected (%v); it takes effect once the projector catches up",
			seq, wire.ControlStream, err)
	}
	return nil
}
