package api_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The HTTP adapter appends and consumes through the event log's own API:
// JetStream's types stay inside eventlog.
func TestAPINamesNoJetStream(t *testing.T) {
	deptest.ForbidImports(t, "github.com/capdir/capdir/api", "github.com/nats-io/nats.go/jetstream")
}
