package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "capdir_console"

// session is one signed-in browser: its id is the cookie's value, csrf the token
// its state-changing requests carry.
type session struct {
	id       string
	csrf     string
	lastSeen time.Time
	// flash is the outcome of the last change, shown once by the next page.
	flash string
	// notice is the flash this request's page shows (set on the copy get returns).
	notice string
}

// sessions holds the signed-in sessions in memory (a restart signs every browser
// out). Safe for concurrent use.
type sessions struct {
	mu    sync.Mutex
	byID  map[string]*session
	idle  time.Duration
	clock func() time.Time
	max   int
}

func newSessions(idle time.Duration, max int, clock func() time.Time) *sessions {
	return &sessions{byID: map[string]*session{}, idle: idle, clock: clock, max: max}
}

// randomToken is 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session. When the store is full, the sessions idle longest go.
func (s *sessions) create() *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	s.sweep(now)
	for len(s.byID) >= s.max {
		var oldest *session
		for _, v := range s.byID {
			if oldest == nil || v.lastSeen.Before(oldest.lastSeen) {
				oldest = v
			}
		}
		delete(s.byID, oldest.id)
	}
	ss := &session{id: randomToken(), csrf: randomToken(), lastSeen: now}
	s.byID[ss.id] = ss
	return ss
}

// get is the live session of id, touched now; nil when there is none or it idled
// out.
func (s *sessions) get(id string) *session {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.byID[id]
	now := s.clock()
	if ss == nil {
		return nil
	}
	if now.Sub(ss.lastSeen) > s.idle {
		delete(s.byID, id)
		return nil
	}
	ss.lastSeen = now
	cp := *ss
	return &cp
}

// alive reports whether the session id is live, without touching it (a live
// stream asks this; only the browser's own requests keep a session alive).
func (s *sessions) alive(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.byID[id]
	return ss != nil && s.clock().Sub(ss.lastSeen) <= s.idle
}

// setFlash keeps msg for the session's next page.
func (s *sessions) setFlash(id, msg string) {
	s.mu.Lock()
	if ss := s.byID[id]; ss != nil {
		ss.flash = msg
	}
	s.mu.Unlock()
}

// takeFlash is the session's flash, cleared.
func (s *sessions) takeFlash(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.byID[id]
	if ss == nil {
		return ""
	}
	msg := ss.flash
	ss.flash = ""
	return msg
}

// remove ends the session id.
func (s *sessions) remove(id string) {
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
}

// sweep drops the sessions idle past the limit. s.mu is held.
func (s *sessions) sweep(now time.Time) {
	for id, v := range s.byID {
		if now.Sub(v.lastSeen) > s.idle {
			delete(s.byID, id)
		}
	}
}

// validCSRF compares a request's token with the session's in constant time.
func (ss *session) validCSRF(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(ss.csrf)) == 1
}

// cookie is the session cookie for ss (an expired one when ss is nil), Secure when
// r came over TLS or the console is reached through a TLS proxy (SecureCookie).
func (c *Console) cookie(r *http.Request, ss *session) *http.Cookie {
	ck := &http.Cookie{Name: cookieName, Path: "/console", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || c.cfg.SecureCookie}
	if ss == nil {
		ck.MaxAge = -1
		return ck
	}
	ck.Value = ss.id
	ck.MaxAge = int(c.cfg.SessionIdle / time.Second)
	return ck
}
