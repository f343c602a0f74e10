package command_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The command side speaks no HTTP: its own files import no net/http, and it
// reaches none of its entry points (the HTTP facade, the console, MCP, the Go
// client, the binary, the node). It appends through the event log's own API, so
// JetStream's types stay inside eventlog.
func TestCommandKnowsNoHTTP(t *testing.T) {
	const pkg = "github.com/capdir/capdir/command"
	deptest.ForbidImports(t, pkg, "net/http", "github.com/nats-io/nats.go/jetstream")
	deptest.Forbid(t, pkg, "github.com/capdir/capdir/api=", "github.com/capdir/capdir/api/console", "github.com/capdir/capdir/api/mcp",
		"github.com/capdir/capdir/api/client", "github.com/capdir/capdir/cmd/", "github.com/capdir/capdir=",
		"github.com/prometheus/client_golang/prometheus/promhttp", "github.com/modelcontextprotocol/go-sdk")
}

// The console and MCP write nothing to the log themselves: they make no event,
// append none and decide no held call, so every change they make goes through
// this package's checks (api's own files are pinned by TestAPIWritesOnlyThroughCommand).
func TestEntryPointsWriteOnlyThroughCommand(t *testing.T) {
	for _, pkg := range []string{"github.com/capdir/capdir/api/console", "github.com/capdir/capdir/api/mcp"} {
		deptest.ForbidCalls(t, pkg, "Append", "AppendAsync", "NewEvent", "DecideApproval")
	}
	deptest.ForbidImports(t, "github.com/capdir/capdir/api/mcp", "github.com/capdir/capdir/eventlog=")
}
