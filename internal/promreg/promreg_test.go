package promreg_test

import (
	"testing"

	"github.com/capdir/capdir/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

func newCounter(help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "promreg_test_total", Help: help}, []string{"l"})
}

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := promreg.Register(reg, newCounter("h"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := promreg.Register(reg, newCounter("h"))
	if err != nil {
		t.Fatalf("an identical collector: %v", err)
	}
	if again != first {
		t.Fatal("an identical collector was not shared with the registered one")
	}
	if _, err := promreg.Register(reg, newCounter("other help")); err == nil {
		t.Fatal("a collector whose help differs from the registered one was accepted")
	}
	private := newCounter("h")
	if got, err := promreg.Register(nil, private); err != nil || got != private {
		t.Fatalf("nil registerer: got %p, %v; want the collector itself", got, err)
	}
}
