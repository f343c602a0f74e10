package mcprunner

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/dispatcher/runner"
)

// helperEnv, set in a process started from this test binary, makes it an MCP
// server over stdio (see TestMain) instead of running the tests.
const helperEnv = "MCPRUNNER_STDIO_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		stdioHelper()
		return
	}
	os.Exit(m.Run())
}

// stdioHelper serves one tool over stdin/stdout: env, the value of the variable
// its "name" argument names ("<unset>" when it is not set).
func stdioHelper() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stdio-helper", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "env", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		v, ok := os.LookupEnv(args.Name)
		if !ok {
			v = "<unset>"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}, nil
	})
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
}

// A stdio upstream runs with the node's environment minus capdir's own
// variables: a tool that reads the environment gets the operator's variables,
// never the owner key.
func TestStdioUpstreamWithoutCapdirVariables(t *testing.T) {
	t.Setenv(helperEnv, "1")
	t.Setenv("CAPDIR_TERMINAL_KEY", "owner-key-never-to-leave")
	t.Setenv("STDIO_UPSTREAM_SETTING", "kept")
	r := newRunner(t, Static{"kid": {Name: "kid", Command: []string{os.Args[0], "-test.run=^$"}}}, nil)
	for name, want := range map[string]string{"STDIO_UPSTREAM_SETTING": "kept", "CAPDIR_TERMINAL_KEY": "<unset>", helperEnv: "1"} {
		o := r.Run(context.Background(), runner.Call{Row: mcpRow("kid/env", ""), Body: `{"name":"` + name + `"}`})
		if o.Err != nil || o.Result != want {
			t.Errorf("%s in the stdio upstream: %q (%v), want %q", name, o.Result, o.Err, want)
		}
		if strings.Contains(o.Result, "owner-key") {
			t.Fatalf("the owner key reached the stdio upstream: %q", o.Result)
		}
	}
}
