package api

import (
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the facade's Prometheus metrics. Build them with NewMetrics and give
// them to Config.Metrics.
type Metrics struct {
	projectorLag *prometheus.GaugeVec
	lag          map[string]prometheus.Gauge // each stream's gauge, resolved once
}

// NewMetrics builds the facade's metrics and registers them on reg:
// capdir_projector_lag_events{stream}, set by GET /healthz. A nil reg registers
// nothing (a private set, as a Config without Metrics gets). An error means reg
// holds a collector of the same name that differs.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	lag, err := promreg.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capdir_projector_lag_events",
		Help: "Events in the log not yet applied to the projection, as of the last health check.",
	}, []string{"stream"}))
	if err != nil {
		return nil, fmt.Errorf("api: register metrics: %w", err)
	}
	m := &Metrics{projectorLag: lag, lag: map[string]prometheus.Gauge{}}
	for _, s := range wire.Streams {
		m.lag[s] = lag.WithLabelValues(s)
	}
	return m, nil
}

func (m *Metrics) setLag(stream string, lag uint64) {
	g := m.lag[stream]
	if g == nil {
		g = m.projectorLag.WithLabelValues(stream)
	}
	g.Set(float64(lag))
}
