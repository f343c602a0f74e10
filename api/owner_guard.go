package api

import "net/http"

// CheckOwnerKey checks key, presented by r's client, through the owner-key guard
// the facade and /mcp check theirs with (Config.OwnerKey), so every entry point
// counts against one throttle per address: nil for the owner key; a
// *ownerkey.ThrottledError when r's address is throttled, whatever the key; else
// ownerkey.ErrWrongKey, counted against the address.
func (s *Server) CheckOwnerKey(r *http.Request, key string) error {
	return s.cfg.OwnerKey.Check(r, key)
}
