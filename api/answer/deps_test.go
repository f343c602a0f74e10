package answer_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The answers are the standard library's only: the client reads them without NATS,
// the JSON Schema compiler or any server-side package.
func TestAnswersStayLight(t *testing.T) {
	deptest.Forbid(t, "github.com/capdir/capdir/api/answer",
		"github.com/nats-io/", "github.com/santhosh-tekuri/jsonschema", "go.etcd.io/bbolt", "github.com/prometheus/",
		"github.com/capdir/capdir/contract", "github.com/capdir/capdir/eventlog", "github.com/capdir/capdir/projector",
		"github.com/capdir/capdir/dispatcher", "github.com/capdir/capdir/api=")
}
