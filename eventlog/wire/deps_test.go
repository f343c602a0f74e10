package wire_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// A program that only invokes capabilities over NATS must stay light: the wire
// package and the example bus client depend on nats.go, not on capdir's server side.
func TestBusClientStaysLight(t *testing.T) {
	for _, pkg := range []string{"github.com/capdir/capdir/eventlog/wire", "github.com/capdir/capdir/examples/natsclient"} {
		deptest.Forbid(t, pkg,
			"github.com/nats-io/nats-server", "go.etcd.io/bbolt", "github.com/prometheus/",
			"github.com/santhosh-tekuri/jsonschema", "github.com/capdir/capdir/contract",
			"github.com/capdir/capdir/projector", "github.com/capdir/capdir/dispatcher")
	}
}
