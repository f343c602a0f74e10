package mcp

import (
	"slices"
	"time"
)

// A credential's sessions are bounded (Config.MaxSessions): each holds a server
// of its own, its tool list and two goroutines for up to SessionIdle, so a
// token holder opening sessions without end would otherwise hold the node's
// memory without end. Past the bound, opening one ends that credential's
// session idle longest, as its idle timeout would: its client's next request is
// the SDK's 404, and a client opens a new session on it. Only the credential's
// own sessions are counted and ended: a token holder cannot end the owner's
// sessions, nor another token's.

// room makes room for a session of c, under h.mu: c's sessions idle longest are
// marked closing, so that no request is served on them from now on, until c
// holds fewer than MaxSessions, and returned to be ended; full reports that c's
// sessions answering a request are MaxSessions already. A session still being
// opened is counted but never ended, nor refuses the new one: its opening may
// yet fail (a client's probe of a protocol version), and once open it is ended
// by the next session to make room. A session answering a request counts as
// busy whether or not its opening has been recorded yet.
func (h *Handler) room(c caller) (idlest []*session, full bool) {
	if h.cfg.MaxSessions < 0 {
		return nil, false
	}
	type held struct {
		s    *session
		used time.Time
	}
	var idle []held
	count, busy := 0, 0
	for _, s := range h.sessions {
		if s.caller.id != c.id {
			continue
		}
		s.mu.Lock()
		switch {
		case s.closing:
		case s.posts > 0:
			// Answering a request, also before adopt has recorded the SDK's
			// session: a client may call as soon as it has read the answer to
			// initialize.
			busy++
			count++
		case s.ss != nil:
			idle = append(idle, held{s, s.used})
			count++
		default:
			count++
		}
		s.mu.Unlock()
	}
	if busy >= h.cfg.MaxSessions {
		return nil, true
	}
	slices.SortFunc(idle, func(a, b held) int { return a.used.Compare(b.used) })
	for _, e := range idle {
		if count < h.cfg.MaxSessions {
			break
		}
		e.s.mu.Lock()
		if e.s.posts == 0 && !e.s.closing { // else a request came meanwhile: it stays
			e.s.closing = true // as ending: no request is served on it from now on
			idlest = append(idlest, e.s)
			count--
		}
		e.s.mu.Unlock()
	}
	return idlest, false
}

// end ends each session room chose, as its idle timeout does.
func end(sessions []*session) {
	for _, s := range sessions {
		s.mu.Lock()
		ss := s.ss
		s.mu.Unlock()
		ss.Close()
	}
}
