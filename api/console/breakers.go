package console

import (
	"net/http"

	"github.com/capdir/capdir/api"
)

func (c *Console) registerBreakers() {
	c.mux.HandleFunc("GET /console/breakers", c.page(c.breakersPage))
	c.mux.HandleFunc("POST /console/breakers/{key}/reset", c.change(c.resetBreaker))
}

type breakersData struct {
	Open, Striking []api.BreakerView
}

// breakersPage lists the breakers refusing calls now (as GET /api/breaker) and
// those counting failures, live.
func (c *Console) breakersPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	open, err := c.cfg.API.OpenBreakers(r.Context())
	if err != nil {
		return err
	}
	striking, err := c.cfg.API.StrikingBreakers(r.Context())
	if err != nil {
		return err
	}
	c.render(w, "breakers", http.StatusOK, view{Title: "Breakers", Nav: "breakers", CSRF: ss.csrf, Notice: ss.notice,
		Data: breakersData{Open: open, Striking: striking}})
	return nil
}

// resetBreaker resets a key's breaker through DELETE /api/breaker/{key}'s path.
func (c *Console) resetBreaker(w http.ResponseWriter, r *http.Request, ss *session) error {
	key := r.PathValue("key")
	if err := c.cmd.Breakers().Reset(r.Context(), key); err != nil {
		return err
	}
	c.done(w, r, ss, "/console/breakers", "Reset the breaker of "+key+".")
	return nil
}
