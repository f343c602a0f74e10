package api

// registerDirectory adds the directory routes.
func (s *Server) registerDirectory() {}
