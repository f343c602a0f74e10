package dispatcher

import (
	"context"
	"fmt"
	"time"

	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A token revocation is a TOKEN_REVOKED event on the control stream, and the gate
// reads it from this node's projection. A request carries the control-stream
// position its entry node had folded (DirSeq), and handle waits for it, so a
// revocation that node had folded is seen here. A revocation appended through
// another node may not have reached the entry node's projection yet; when other
// processes may append to the log, the worker asks the log whether the token has a
// revocation (one lookup of the token's own subject) and waits until its
// projection has folded it. On a log only this process writes (the embedded
// server with no client port), every revocation went through this process's
// projection before the request was appended, and nothing is asked.

// sharedLog reports whether processes other than this one may append to l: an
// external cluster, or an embedded server that accepts clients.
func sharedLog(l *eventlog.Log) bool { return !l.Embedded() || l.ClientURL() != "" }

// revocationWait bounds the lookup and the wait for the projection.
const revocationWait = 5 * time.Second

// catchUpRevocation brings the projection up to the revocation of the request's
// token, if the log holds one. A token that does not authenticate is left to the
// gate to refuse. Should the lookup or the wait fail, in.RevokedErr makes the
// gate refuse the token rather than admit it unchecked.
func (s *Service) catchUpRevocation(ctx context.Context, in *gate.Input) {
	if !s.sharedLog || in.Owner || in.Req.Token == "" {
		return
	}
	c, err := s.cfg.Tokens.Authenticate(in.Req.Token, s.cfg.Clock())
	if err != nil || !wire.ValidTokenID(c.ID) {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, revocationWait)
	defer cancel()
	seq, err := s.cfg.Log.LastSubjectSeq(lctx, wire.ControlStream, wire.TokenSubject(c.ID))
	if err != nil {
		in.RevokedErr = err
		return
	}
	if seq > s.cfg.Projector.Applied(wire.ControlStream) {
		if err := s.cfg.Projector.WaitFor(lctx, wire.ControlStream, seq); err != nil {
			in.RevokedErr = fmt.Errorf("the token's revocation is at sequence %d of %s, not yet folded here: %w", seq, wire.ControlStream, err)
		}
	}
}

// Caller checks who the caller presenting raw is, as the gate will: see
// gate.Gate.Caller. An entry point refuses a token that does not hold before it
// appends anything.
func (s *Service) Caller(raw string) (*token.Claims, *gate.Refusal) { return s.gate.Caller(raw) }
