package projector

import (
	"errors"
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the projector's Prometheus metrics. Build them with NewMetrics and
// give them to Config.Metrics; one Metrics may serve several Projectors (a live one
// and a Rebuild), which then count together.
type Metrics struct {
	batchSize     *prometheus.HistogramVec
	appliedEvents *prometheus.CounterVec
	streams       map[string]streamMetrics // each stream's series, resolved once
}

type streamMetrics struct {
	batch   prometheus.Observer
	applied prometheus.Counter
}

// NewMetrics builds the projector's metrics and registers them on reg:
// capdir_projector_batch_events{stream} and
// capdir_projector_events_applied_total{stream}. A nil reg registers nothing (a
// private set, as a Config without Metrics gets). An error means reg holds a
// collector of the same name that differs.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	batchSize, err1 := promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capdir_projector_batch_events",
		Help:    "Events applied per projector batch (one bbolt transaction).",
		Buckets: prometheus.ExponentialBuckets(1, 4, 7),
	}, []string{"stream"}))
	applied, err2 := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_projector_events_applied_total",
		Help: "Events folded into the projection.",
	}, []string{"stream"}))
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("projector: register metrics: %w", err)
	}
	m := &Metrics{batchSize: batchSize, appliedEvents: applied, streams: map[string]streamMetrics{}}
	for _, s := range wire.Streams {
		m.streams[s] = streamMetrics{batch: batchSize.WithLabelValues(s), applied: applied.WithLabelValues(s)}
	}
	return m, nil
}

func (m *Metrics) batch(stream string, n int) {
	sm, ok := m.streams[stream]
	if !ok {
		sm = streamMetrics{batch: m.batchSize.WithLabelValues(stream), applied: m.appliedEvents.WithLabelValues(stream)}
	}
	sm.batch.Observe(float64(n))
	sm.applied.Add(float64(n))
}
