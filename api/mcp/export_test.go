package mcp

// OpenSessions is how many sessions the handler follows.
func (h *Handler) OpenSessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}
