package mcprunner

import (
	"context"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
)

// A row with an input_schema gets its call's arguments as the pipe form the gate
// admits them in (an arguments object sent to POST /api/dispatch or capdir's
// /mcp runs so); the tool is sent them by name, typed as the schema declares.
func TestNamedArgumentsFromThePipeForm(t *testing.T) {
	_, hs := mcptest.Server(t)
	r := newRunner(t, Static{"up": {Name: "up", URL: hs.URL}}, nil)
	row := mcpRow("up/echo", "# WHAT: Echo.")
	row.InputSchema = `{"type":"object","properties":{"message":{"type":"string"},"n":{"type":"integer"}},"required":["message"]}`
	for body, want := range map[string]string{
		"hello|2":             `{"message":"hello","n":2}`,
		"hello":               `{"message":"hello"}`,
		`{"message":"as-is"}`: `{"message":"as-is"}`,
	} {
		if o := r.Run(context.Background(), runner.Call{Row: row, Body: body}); o.Err != nil || o.Result != want {
			t.Errorf("body %q: %q (%v), want %q", body, o.Result, o.Err, want)
		}
	}
}
