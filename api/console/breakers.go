package console

import (
	"net/http"
)

func (c *Console) registerBreakers() {
	c.mux.HandleFunc("GET /console/breakers", c.page(c.breakersPage))
	c.mux.HandleFunc("POST /console/breakers/{key}/reset", c.change(c.resetBreaker))
}

// breakersPage lists the breakers refusing calls now, live, as GET /api/breaker.
func (c *Console) breakersPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	list, err := c.cfg.API.OpenBreakers(r.Context())
	if err != nil {
		return err
	}
	c.render(w, "breakers", http.StatusOK, view{Title: "Breakers", Nav: "breakers", CSRF: ss.csrf, Notice: ss.notice, Data: list})
	return nil
}

// resetBreaker resets a key's breaker through DELETE /api/breaker/{key}'s path.
func (c *Console) resetBreaker(w http.ResponseWriter, r *http.Request, ss *session) error {
	key := r.PathValue("key")
	if err := c.cfg.API.ResetBreaker(r.Context(), key); err != nil {
		return err
	}
	c.done(w, r, ss, "/console/breakers", "Reset the breaker of "+key+".")
	return nil
}
