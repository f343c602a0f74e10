package dispatcher_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The dispatcher consumes requests and appends receipts through the event log's
// own API (eventlog.Consumer, eventlog.Msg): neither NATS's nor JetStream's types
// reach it. Its runners (dispatcher/runner/...) are apart: the nats runner talks
// NATS by design.
func TestDispatcherNamesNoNATS(t *testing.T) {
	deptest.ForbidImports(t, "github.com/capdir/capdir/dispatcher", "github.com/nats-io/")
}
