package api

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	projectorLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capdir_projector_lag_events",
		Help: "Events in the log not yet applied to the projection, as of the last health check.",
	}, []string{"stream"})
)

// appends counts the facade's own appends by outcome; the log counts every append
// as capdir_log_appends_total.
var appends = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "capdir_facade_appends_total",
	Help: "Events appended by the HTTP facade, by type and result.",
}, []string{"type", "result"})
