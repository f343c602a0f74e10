package mcp_test

import (
	"testing"

	"github.com/capdir/capdir/internal/deptest"
)

// The MCP facade offers rows as tools the way an agent row does (runner.ToolOf,
// runner.ToolBody) without depending on the agent runner or any other runner.
func TestMCPKnowsNoRunner(t *testing.T) {
	deptest.Forbid(t, "github.com/capdir/capdir/api/mcp",
		"github.com/capdir/capdir/dispatcher/runner/agentrunner", "github.com/capdir/capdir/dispatcher/runner/httprunner",
		"github.com/capdir/capdir/dispatcher/runner/flowrunner", "github.com/capdir/capdir/dispatcher/runner/fnrunner",
		"github.com/capdir/capdir/dispatcher/runner/natsrunner")
}
