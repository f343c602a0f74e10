package api

import (
	"context"
	"net/http"
	"sort"

	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
)

// registerBreaker adds the breaker routes:
//
//	GET    /api/breaker        the breakers refusing calls now (owner)
//	GET    /api/breaker/{key}  one key's breaker, open or not (owner)
//	DELETE /api/breaker/{key}  an owner reset: append BREAKER_RESET (owner)
func (s *Server) registerBreaker() {
	s.handle("GET /api/breaker", s.owner(s.breakerList))
	s.handle("GET /api/breaker/{key}", s.owner(s.breakerGet))
	s.handle("DELETE /api/breaker/{key}", s.owner(s.breakerReset))
}

// BreakerView is one breaker as the facade shows it, and RefusedCaller one
// caller its own auth failures refuse on a row: api/answer's types, which the Go
// client reads too.
type (
	BreakerView   = answer.Breaker
	RefusedCaller = answer.RefusedCaller
)

// breakerView is st as the gate sees it now (breakerDecision), for the row and for
// each caller its own run refuses.
func (s *Server) breakerView(st breaker.State) BreakerView {
	v := BreakerView{Key: st.Key, Strikes: st.Strikes}
	d := s.breakerDecision(st, "")
	if !d.Open {
		if st.Open {
			v.Strikes = 0 // expired: the next call starts a fresh run
		}
		for _, r := range st.Callers {
			if cd := s.breakerDecision(st, r.Caller); cd.Open && cd.Caller {
				v.RefusedCallers = append(v.RefusedCallers, RefusedCaller{Caller: r.Caller, OpenedAt: cd.OpenedAt.UTC(), ClosesAt: cd.ClosesAt.UTC()})
			}
		}
		return v
	}
	opened, closes := d.OpenedAt.UTC(), d.ClosesAt.UTC()
	v.Open, v.OpenedAt, v.ClosesAt = true, &opened, &closes
	v.Message = breaker.Message(st.Key, s.cfg.Breaker.Threshold)
	return v
}

// breakerDecision is the gate's decision for st and caller now. The dispatcher
// decides (it alone reads credentials, to notice a replaced one); without one only
// the cooldown counts.
func (s *Server) breakerDecision(st breaker.State, caller string) breaker.Decision {
	if s.cfg.Dispatcher != nil {
		return s.cfg.Dispatcher.BreakerDecision(st, caller)
	}
	return s.cfg.Breaker.Check(st, s.cfg.Clock(), "", caller)
}

// breakerList answers {"breakers":[…]}: every breaker refusing calls now, by key.
func (s *Server) breakerList(w http.ResponseWriter, r *http.Request) error {
	out, err := s.OpenBreakers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"breakers": out})
	return nil
}

// OpenBreakers are the breakers refusing calls now, by key, once this node has
// folded the data stream as the log holds it: GET /api/breaker and the console
// both read them here. Errors: ErrUnavailable.
func (s *Server) OpenBreakers(ctx context.Context) ([]BreakerView, error) {
	s.settleCtx(ctx, wire.DataStream, "breakers")
	states, err := s.cfg.Projector.Breakers()
	if err != nil {
		return nil, newError(ErrUnavailable, "breakers unavailable: %w", err)
	}
	out := []BreakerView{}
	for _, st := range states {
		if v := s.breakerView(st); v.Open || len(v.RefusedCallers) > 0 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// StrikingBreakers are the breakers not refusing calls but counting failures now,
// by key: the console lists them beside the open ones. Errors: ErrUnavailable.
func (s *Server) StrikingBreakers(ctx context.Context) ([]BreakerView, error) {
	s.settleCtx(ctx, wire.DataStream, "breakers")
	states, err := s.cfg.Projector.Striking()
	if err != nil {
		return nil, newError(ErrUnavailable, "breakers unavailable: %w", err)
	}
	out := []BreakerView{}
	for _, st := range states {
		if v := s.breakerView(st); !v.Open && v.Strikes > 0 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// breakerGet answers one key's BreakerView (closed with no strikes when it never
// struck).
func (s *Server) breakerGet(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	if err := contract.ValidateKey(key); err != nil {
		return err
	}
	s.settle(r)
	st, err := s.cfg.Projector.Breaker(key)
	if err != nil {
		return newError(ErrUnavailable, "breaker unavailable: %w", err)
	}
	writeJSON(w, http.StatusOK, s.breakerView(st))
	return nil
}

// breakerReset appends a BREAKER_RESET for the key and answers once this node's
// projection has applied it, so the next call through this node is not refused.
// Resetting a closed breaker (or the key of a row that never struck) is allowed and
// clears its strikes; a key with neither a row nor a breaker state is 404
// {"error":"not_found","key":…}, and nothing is appended.
func (s *Server) breakerReset(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	if err := s.cmd.Breakers().Reset(r.Context(), key); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, breakerResetAnswer{OK: true, Key: key, Reset: true})
	return nil
}

// breakerResetAnswer is DELETE /api/breaker/{key}'s answer, in this field order.
type breakerResetAnswer struct {
	OK    bool   `json:"ok"`
	Key   string `json:"key"`
	Reset bool   `json:"reset"`
}
