package eventlog

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var appends = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "capdir_log_appends_total",
	Help: "Events appended to the log by this process, by event type and result (ok, conflict, error).",
}, []string{"type", "result"})

func countAppend(typ string, err error) {
	result := "ok"
	switch {
	case err == nil:
	case isConflict(err):
		result = "conflict"
	default:
		result = "error"
	}
	appends.WithLabelValues(typ, result).Inc()
}
