package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// registerTokens adds the capability-token routes, both the owner's:
//
//	POST   /api/tokens        mint: {sub, scope:{keys,categories}, risk, pin?, body?,
//	                          max_payload?, ttl_seconds?} -> 201 {token, jti, exp, claims};
//	                          "pin":"current" pins the one scoped row's contract now
//	DELETE /api/tokens/{jti}  revoke: append TOKEN_REVOKED, answer once it is folded here
//
// Minting appends nothing: a token is its own record, and the owner's answer is
// the only copy of it. capdir never logs or stores a token it mints.
func (s *Server) registerTokens() {
	s.handle("POST /api/tokens", s.owner(s.mintToken))
	s.handle("DELETE /api/tokens/{jti}", s.owner(s.revokeToken))
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

// maxMintBody bounds a mint request: a fixed body may take up most of a token.
const maxMintBody = 64 << 10

func (s *Server) mintToken(w http.ResponseWriter, r *http.Request) error {
	var in MintRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMintBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return badRequest(mintBodyError(err))
	}
	if dec.More() {
		return badRequest("one JSON object only; " + mintShapeHint)
	}
	ans, err := s.Mint(in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, ans)
	return nil
}

// Mint mints the token in asks for, as the owner: POST /api/tokens and the console
// both mint here. Errors: ErrBadRequest saying what to fix, or ErrUnavailable.
func (s *Server) Mint(in MintRequest) (MintAnswer, error) {
	if in.TTLSeconds < 0 {
		return MintAnswer{}, badRequest(fmt.Sprintf("ttl_seconds %d is negative; leave it out for the default (%v)", in.TTLSeconds, token.DefaultTTL))
	}
	pin, err := s.resolvePin(in.Pin, in.Scope)
	if err != nil {
		return MintAnswer{}, err
	}
	ttl := time.Duration(min(in.TTLSeconds, math.MaxInt64/int64(time.Second))) * time.Second
	raw, c, err := s.cfg.Minter.Mint(token.MintRequest{
		Subject: in.Sub, Scope: in.Scope, Risk: in.Risk, Pin: pin, Body: in.Body, MaxPayload: in.MaxPayload, TTL: ttl,
	}, s.cfg.Clock())
	if err != nil {
		return MintAnswer{}, badRequest(err.Error())
	}
	s.cfg.Logger.Info("api: capability token minted", "jti", c.ID, "sub", c.Subject, "exp", c.ExpiryTime())
	return MintAnswer{Token: raw, JTI: c.ID, Exp: c.Expiry, Claims: c}, nil
}

// pinCurrent, as a mint request's pin, pins the current contract of the one key
// in the token's scope.
const pinCurrent = "current"

// resolvePin turns "current" into the fingerprint of the scope's one row. Errors:
// ErrBadRequest, or ErrUnavailable when the projection cannot be read.
func (s *Server) resolvePin(pin string, scope token.Scope) (string, error) {
	if pin != pinCurrent {
		return pin, nil
	}
	if len(scope.Keys) != 1 || len(scope.Categories) != 0 {
		return "", badRequest(`"pin":"current" pins the contract of the token's one key: give exactly one key in scope.keys and no category`)
	}
	row, _, err := s.cfg.Projector.Row(scope.Keys[0])
	if errors.Is(err, projector.ErrNotFound) {
		return "", badRequest(fmt.Sprintf(`"pin":"current": there is no row %q whose contract to pin`, scope.Keys[0]))
	}
	if err != nil {
		return "", newError(ErrUnavailable, "%w", err)
	}
	return contract.Fingerprint(&row), nil
}

// revokeAnswer is DELETE /api/tokens/{jti}'s answer.
type revokeAnswer struct {
	OK      bool   `json:"ok"`
	JTI     string `json:"jti"`
	Revoked bool   `json:"revoked"`
}

// revokeToken appends TOKEN_REVOKED for the token id and answers once this node's
// projection has folded it: from then on no request entering this node runs with
// the token, and no worker of the deployment runs it either (see the dispatcher's
// revocation.go). A token this node already holds as revoked appends nothing.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	jti := r.PathValue("jti")
	if err := s.Revoke(r.Context(), jti); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, revokeAnswer{OK: true, JTI: jti, Revoked: true})
	return nil
}

// Revoke appends TOKEN_REVOKED for the token id jti and returns once this node's
// projection has folded it: DELETE /api/tokens/{jti} and the console both revoke
// here. Errors: ErrBadRequest for what is no token id, ErrUnavailable, or
// ErrNotVisible (written, not yet folded).
func (s *Server) Revoke(ctx context.Context, jti string) error {
	if !wire.ValidTokenID(jti) {
		return badRequest(fmt.Sprintf("%q is not a token id: give the jti POST /api/tokens answered (1 to %d characters of A-Z a-z 0-9 _ -)", jti, wire.MaxTokenIDLen))
	}
	if s.cfg.Projector.Revoked(jti) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	// Every token alive now expires before now + the longest lifetime, give or take
	// the clock skew a verifier tolerates: past that the revocation need not be held.
	exp := s.cfg.Clock().Add(s.cfg.Minter.MaxTTL() + token.MaxLeeway).Unix()
	ev, err := s.cfg.Log.NewEvent(wire.TypeTokenRevoked, OwnerActor, wire.TokenRevoked{JTI: jti, Exp: exp})
	if err != nil {
		return newError(ErrUnavailable, "revocation not written: %w", err)
	}
	seq, err := s.cfg.Log.Append(ctx, wire.TokenSubject(jti), ev)
	if err != nil {
		return newError(ErrUnavailable, "revocation not written: %w", err)
	}
	if err := s.cfg.Projector.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		return newError(ErrNotVisible,
			"revocation written to the log (sequence %d of %s) but not yet projected (%v); it takes effect once the projector catches up",
			seq, wire.ControlStream, err)
	}
	return nil
}

// mintShapeHint is how a POST /api/tokens body looks.
const mintShapeHint = `send {"sub":"NAME","scope":{"keys":["KEY"],"categories":["CAT"]},"risk":"low"} ` +
	`(optional "pin", "body", "max_payload", "ttl_seconds")`

// mintBodyError is the 400 message for a POST /api/tokens body that does not decode.
func mintBodyError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("the body is over %d bytes; %s", maxMintBody, mintShapeHint)
	case errors.As(err, &te):
		if hint, ok := mintFieldHints[te.Field]; ok {
			return hint
		}
		return "the body must be a JSON object; " + mintShapeHint
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d (%s); %s", se.Offset, se.Error(), mintShapeHint)
	case errors.Is(err, io.EOF):
		return "empty body; " + mintShapeHint
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON object is closed; " + mintShapeHint
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + "; " + mintShapeHint
	}
	return "malformed body: " + err.Error() + "; " + mintShapeHint
}

// mintFieldHints name what each field of a mint request must hold.
var mintFieldHints = map[string]string{
	"sub":              `"sub" must be a string naming the holder, like "billing-agent"`,
	"scope":            `"scope" must be an object {"keys":["KEY",…],"categories":["CAT",…]}`,
	"scope.keys":       `"scope.keys" must be an array of row keys, like ["GREET"]`,
	"scope.categories": `"scope.categories" must be an array of categories, like ["demo"]`,
	"risk":             `"risk" must be "low" or "high"`,
	"pin":              `"pin" must be a contract fingerprint (64 lower-case hex digits), or "current"`,
	"body":             `"body" must be a string: the only body the token may send`,
	"max_payload":      `"max_payload" must be a whole number of bytes`,
	"ttl_seconds":      `"ttl_seconds" must be a whole number of seconds`,
}
