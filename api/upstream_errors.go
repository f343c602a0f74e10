package api

import (
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
)

// The answers of the upstream routes (upstreams.go), in one place. Statuses are
// the error table's: 400 for a request to fix, 404 for a name not registered,
// 409 for a name the operator's flags own, 413 for a body over the limit.

// upstreamShapeHint is how a PUT /api/upstreams/{name} body looks.
const upstreamShapeHint = `send {"url":"https://HOST/PATH","auth":"bearer:ENV_NAME"} ("auth" optional, in the form of a row's auth column)`

func errUpstreamName(name string) error {
	return badRequest(fmt.Sprintf("%q is not an upstream name: give 1 to %d letters, digits, '-' and '_'", clipParam(name), wire.MaxUpstreamNameLen))
}

// errUpstreamCommand refuses a body naming a command: a stdio upstream is code
// run on the node, so only the operator's flags can name one.
var errUpstreamCommand = badRequest(`an upstream registered through the API is streamable HTTP only: "command" cannot be set here, ` +
	"since a command is code run on the node; a stdio upstream is the operator's capdir serve --mcp-stdio 'NAME=COMMAND ARGS…'")

func errUpstreamBody(problem string) error { return badRequest(problem + "; " + upstreamShapeHint) }

func errUpstreamTooLarge() error {
	return tooLarge("the upstream registration", -1, maxUpstreamBody)
}

// upstreamNotFound is a name no upstream has: 404 {"error":"not_found",
// "upstream":…,"how_to_fix":…} (notFoundBody).
type upstreamNotFound struct{ name string }

func (e *upstreamNotFound) Error() string {
	return "no upstream " + e.name + " is registered (GET /api/upstreams lists them)"
}
func (e *upstreamNotFound) Is(target error) bool { return target == ErrNotFound }

func (e *upstreamNotFound) body() map[string]string {
	return map[string]string{"error": "not_found", "upstream": e.name, "how_to_fix": "GET /api/upstreams lists the upstreams (capdir upstream list)"}
}

func errUpstreamNotRegistered(name string) error { return &upstreamNotFound{name: name} }

func errUpstreamFixed(name string) error {
	return newError(ErrExists, "the upstream %s is configured by this node's --mcp-http/--mcp-stdio flags, which the API cannot change: "+
		"register another name, or restart capdir serve without that flag", name)
}

func errUpstreamNotWritten(err error) error {
	return newError(ErrUnavailable, "upstream registration not written: %w", err)
}

func errUpstreamNotVisible(seq uint64, err error) error {
	return newError(ErrNotVisible, "upstream registration written to the log (sequence %d of %s) but not yet projected (%v); it takes effect once the projector catches up",
		seq, wire.ControlStream, err)
}
