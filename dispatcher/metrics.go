package dispatcher

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	invocations = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_invocations_total",
		Help: "Invocations that got a receipt, by receipt status.",
	}, []string{"status"})
	runSeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "capdir_invocation_seconds",
		Help:    "Time from a worker taking a request to its receipt being built.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	})
)
