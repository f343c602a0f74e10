package mcp

import "sync"

// OpenSessions is how many sessions the handler follows once their first request
// has been served.
func (h *Handler) OpenSessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.sessions {
		s.mu.Lock()
		if s.ss != nil {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// RegisteredSessions is how many sessions the handler holds, also those whose
// opening is not yet recorded (OpenSessions counts those recorded only).
func (h *Handler) RegisteredSessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// HoldSessionEnds holds every session's end, as adopt's wait sees it, until
// release is called: what a request gets meanwhile is the SDK's and ending's.
func HoldSessionEnds() (release func()) {
	held := make(chan struct{})
	endHold.Store(&held)
	var once sync.Once
	return func() {
		once.Do(func() {
			endHold.Store(nil)
			close(held)
		})
	}
}
