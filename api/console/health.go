package console

import (
	"net/http"
	"sort"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

type healthStream struct {
	Name string
	api.StreamHealth
}

// healthFailures is how many of the newest failed calls the health page lists.
const healthFailures = 10

type healthData struct {
	Node string
	// Busy of Workers run a call now; Workers is 0 when the node runs none.
	Busy, Workers int
	Streams       []healthStream
	// Failures are the newest calls that ran and failed, or failed before they ran
	// (not the refusals: those are the gate's answers, not errors).
	Failures []wire.Receipt
	Rows     int
	// Bus are the identities admitted to the embedded NATS server (capdir bus list).
	Bus      []eventlog.BusClient
	BusError string
}

// healthPage shows the log's and the projection's positions per stream, as GET
// /healthz reports them, and the bus identities, as capdir bus list does.
func (c *Console) healthPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	streams, err := c.cfg.API.Health(r.Context())
	if err != nil {
		return err
	}
	d := healthData{Node: c.cfg.NodeName, Rows: c.cfg.Projector.Count()}
	if c.cfg.Workers != nil {
		d.Busy, d.Workers = c.cfg.Workers()
	}
	d.Failures, err = c.cfg.Projector.RecentReceipts(healthFailures, receiptsScan, func(rc *wire.Receipt) bool { return statusClass(rc) == "failed" })
	if err != nil {
		return unavailable(err)
	}
	for name, h := range streams {
		d.Streams = append(d.Streams, healthStream{Name: name, StreamHealth: h})
	}
	sort.Slice(d.Streams, func(i, j int) bool { return d.Streams[i].Name < d.Streams[j].Name })
	if c.cfg.DataDir != "" {
		if d.Bus, err = eventlog.BusClients(c.cfg.DataDir); err != nil {
			d.BusError = err.Error()
		}
	}
	c.render(w, "health", http.StatusOK, view{Title: "Health", Nav: "health", CSRF: ss.csrf, Data: d})
	return nil
}
