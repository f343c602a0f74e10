package eventlog

import (
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the log's Prometheus metrics. Build them with NewMetrics and give
// them to Config.Metrics; one Metrics may serve several Logs, which then count
// together.
type Metrics struct {
	appends *prometheus.CounterVec
	// byType holds the counters of every known event type, resolved once, indexed
	// by append result: an append does not look its series up by name.
	byType map[string]*[appendResults]prometheus.Counter
}

// Append results, the values of the result label.
const (
	appendOK = iota
	appendConflict
	appendError
	appendResults
)

var appendResultLabels = [appendResults]string{"ok", "conflict", "error"}

// NewMetrics builds the log's metrics and registers them on reg:
// capdir_log_appends_total{type,result}. A nil reg registers nothing (a private
// set, as a Config without Metrics gets). An error means reg holds a collector of
// the same name that differs.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	vec, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_log_appends_total",
		Help: "Events appended to the log by this process, by event type and result (ok, conflict, error).",
	}, []string{"type", "result"}))
	if err != nil {
		return nil, fmt.Errorf("eventlog: register metrics: %w", err)
	}
	m := &Metrics{appends: vec, byType: map[string]*[appendResults]prometheus.Counter{}}
	for _, typ := range []string{wire.TypeDirectoryMutate, wire.TypeInvocationRequested, wire.TypeReceipt, wire.TypeTokenRevoked, wire.TypeBreakerReset} {
		var cs [appendResults]prometheus.Counter
		for r, label := range appendResultLabels {
			cs[r] = vec.WithLabelValues(typ, label)
		}
		m.byType[typ] = &cs
	}
	return m, nil
}

func (m *Metrics) countAppend(typ string, err error) {
	result := appendOK
	switch {
	case err == nil:
	case isConflict(err):
		result = appendConflict
	default:
		result = appendError
	}
	if cs := m.byType[typ]; cs != nil {
		cs[result].Inc()
		return
	}
	m.appends.WithLabelValues(typ, appendResultLabels[result]).Inc()
}
