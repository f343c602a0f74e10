package projector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	batchSize = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capdir_projector_batch_events",
		Help:    "Events applied per projector batch (one bbolt transaction).",
		Buckets: prometheus.ExponentialBuckets(1, 4, 7),
	}, []string{"stream"})
	appliedEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_projector_events_applied_total",
		Help: "Events folded into the projection.",
	}, []string{"stream"})
)

func metricBatch(stream string, n int) {
	batchSize.WithLabelValues(stream).Observe(float64(n))
	appliedEvents.WithLabelValues(stream).Add(float64(n))
}
