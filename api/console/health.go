package console

import (
	"net/http"
	"sort"

	"github.com/capdir/capdir/api"
)

type healthStream struct {
	Name string
	api.StreamHealth
}

type healthData struct {
	Streams []healthStream
	Rows    int
}

// healthPage shows the log's and the projection's positions per stream, as GET
// /healthz reports them.
func (c *Console) healthPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	streams, err := c.cfg.API.Health(r.Context())
	if err != nil {
		return err
	}
	d := healthData{Rows: c.cfg.Projector.Count()}
	for name, h := range streams {
		d.Streams = append(d.Streams, healthStream{Name: name, StreamHealth: h})
	}
	sort.Slice(d.Streams, func(i, j int) bool { return d.Streams[i].Name < d.Streams[j].Name })
	c.render(w, "health", http.StatusOK, view{Title: "Health", Nav: "health", CSRF: ss.csrf, Data: d})
	return nil
}
