package api

// registerBreaker adds the breaker routes.
func (s *Server) registerBreaker() {}
