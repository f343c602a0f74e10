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
	skippedEvents *prometheus.CounterVec
	streams       map[string]streamMetrics // each stream's series, resolved once
}

type streamMetrics struct {
	batch   prometheus.Observer
	applied prometheus.Counter
	skipped map[string]prometheus.Counter // by reason
}

// NewMetrics builds the projector's metrics and registers them on reg:
// capdir_projector_batch_events{stream},
// capdir_projector_events_applied_total{stream} and
// capdir_projector_events_skipped_total{stream,reason}: the events not folded
// because they failed a fold-time check (see the package doc), by reason
// (bad_envelope, unknown_type, wrong_subject, bad_data, key_mismatch, bad_mutation,
// fold_error). A nil reg registers nothing (a
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
	skipped, err3 := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_projector_events_skipped_total",
		Help: "Events not folded because they failed a fold-time check, by reason; the checkpoint moves past them.",
	}, []string{"stream", "reason"}))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("projector: register metrics: %w", err)
	}
	m := &Metrics{batchSize: batchSize, appliedEvents: applied, skippedEvents: skipped, streams: map[string]streamMetrics{}}
	for _, s := range wire.Streams {
		m.streams[s] = m.stream(s)
	}
	return m, nil
}

// stream resolves one stream's series, every skip reason's included, so each
// is exported (at 0) from the start.
func (m *Metrics) stream(s string) streamMetrics {
	sm := streamMetrics{batch: m.batchSize.WithLabelValues(s), applied: m.appliedEvents.WithLabelValues(s),
		skipped: map[string]prometheus.Counter{}}
	for _, r := range skipReasons {
		sm.skipped[r] = m.skippedEvents.WithLabelValues(s, r)
	}
	return sm
}

// batch counts a committed batch of n events, of which skipped were not folded.
func (m *Metrics) batch(stream string, n, skipped int) {
	sm, ok := m.streams[stream]
	if !ok {
		sm = m.stream(stream)
	}
	sm.batch.Observe(float64(n))
	sm.applied.Add(float64(n - skipped))
}

// skipped counts one event of stream not folded for reason.
func (m *Metrics) skipped(stream, reason string) {
	if c, ok := m.streams[stream].skipped[reason]; ok {
		c.Inc()
		return
	}
	m.skippedEvents.WithLabelValues(stream, reason).Inc()
}
