// Package promreg registers a package's Prometheus collectors on the registerer it
// is given, the one way every capdir package's NewMetrics does it.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns the collector to use: c itself, or, when
// reg already holds an identical collector (same name, labels and help), that one,
// so two components given one registerer count together instead of failing. A nil
// reg registers nothing and returns c: a private, unregistered collector. Any other
// registration error (the name taken with other labels or help) is returned.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, err
}
