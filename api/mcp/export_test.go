package mcp

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
