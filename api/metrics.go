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
