package mcp

// A session ends after Config.SessionIdle without a POST, counted here rather than
// by the SDK, because the fast path answers tools/call without it: every POST of
// a session, whichever path answers it, holds the timer while it is served (a
// long call is not idleness), and the wait starts again once the last one ends.
// A GET stream of notifications is not a request and holds nothing.

// busy records a POST of the session starting; false when the session is closing
// (the request goes to the SDK, which says the session is gone).
func (s *session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.posts++
	s.inflight.Add(1)
	if s.posts == 1 && s.idle != nil {
		s.idle.Stop()
	}
	return true
}

// done records a POST of the session ending: the last one starts the idle wait.
func (s *session) done() {
	s.mu.Lock()
	s.posts--
	if s.posts == 0 {
		s.used = s.h.cfg.Clock()
		if s.idle != nil && !s.closing {
			s.idle.Reset(s.h.cfg.SessionIdle)
		}
	}
	s.mu.Unlock()
	s.inflight.Done()
}

// initialized reports whether the SDK's session has been initialized: until then
// every call is the SDK's to refuse. The client may call as soon as it has read
// the answer to initialize, before adopt has recorded the session.
func (s *session) initialized() bool {
	s.mu.Lock()
	ss := s.ss
	s.mu.Unlock()
	if ss == nil {
		for x := range s.srv.Sessions() {
			ss = x
		}
	}
	return ss != nil && ss.InitializeParams() != nil
}
