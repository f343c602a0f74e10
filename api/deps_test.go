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

// The HTTP adapter changes nothing itself: every event a route causes is made and
// appended by the command side (package command), or by the dispatcher it hands
// a call to, and a decision on a held call is carried out there too.
func TestAPIWritesOnlyThroughCommand(t *testing.T) {
	deptest.ForbidCalls(t, "github.com/capdir/capdir/api", "Append", "AppendAsync", "NewEvent", "DecideApproval")
}
