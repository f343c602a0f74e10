package dispatcher

import (
	"errors"
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the dispatcher's Prometheus metrics. Build them with NewMetrics and
// give them to ServiceConfig.Metrics; one Metrics may serve several Services,
// which then count together.
type Metrics struct {
	invocations *prometheus.CounterVec
	runSeconds  prometheus.Histogram
	// byStatus holds the counter of every receipt status, resolved once: a receipt
	// does not look its series up by name.
	byStatus map[string]prometheus.Counter
	// idWaits counts the bus requests a worker looked up only after waiting for
	// this node's projection (duplicate).
	idWaits prometheus.Counter
}

// receiptStatuses are the statuses a worker's receipt can have.
var receiptStatuses = []string{
	wire.StatusProvenMaterialResult, wire.StatusRanWithError, wire.StatusFailedBeforeRun, wire.StatusShapeOnly,
	wire.StatusRefusedUnknownKey, wire.StatusRefusedBreakerOpen, wire.StatusRefusedDisabled,
	wire.StatusRefusedPayloadTooLarge, wire.StatusRefusedBadRequest, wire.StatusRefusedInput,
}

// NewMetrics builds the dispatcher's metrics and registers them on reg:
// capdir_invocations_total{status}, capdir_invocation_seconds and
// capdir_bus_id_waits_total: the bus requests whose invocation id a worker
// looked up only after waiting for this node's projection to fold everything
// the log held before the request. A nil reg
// registers nothing (a private set, as a ServiceConfig without Metrics gets). An
// error means reg holds a collector of the same name that differs.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	invocations, err1 := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdir_invocations_total",
		Help: "Invocations that got a receipt, by receipt status.",
	}, []string{"status"}))
	runSeconds, err2 := promreg.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "capdir_invocation_seconds",
		Help:    "Time from a worker taking a request to its receipt being built.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	}))
	idWaits, err3 := promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "capdir_bus_id_waits_total",
		Help: "Bus requests whose invocation id a worker looked up only after waiting for this node's projection to fold what the log held before them.",
	}))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("dispatcher: register metrics: %w", err)
	}
	m := &Metrics{invocations: invocations, runSeconds: runSeconds, byStatus: map[string]prometheus.Counter{},
		idWaits: idWaits}
	for _, st := range receiptStatuses {
		m.byStatus[st] = invocations.WithLabelValues(st)
	}
	return m, nil
}

// receipt counts one receipt in the log.
func (m *Metrics) receipt(rc *wire.Receipt) {
	c := m.byStatus[rc.Status]
	if c == nil {
		c = m.invocations.WithLabelValues(rc.Status)
	}
	c.Inc()
	m.runSeconds.Observe(rc.DurationMS / 1000)
}
