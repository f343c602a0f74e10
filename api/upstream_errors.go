package api

import (
	"github.com/capdir/capdir/command"
)

// The answers of the upstream routes (upstreams.go) that are the facade's own;
// the command side words the rest (command.Upstreams). Statuses are the error
// table's: 400 for a request to fix, 404 for a name not registered, 409 for a
// name the operator's flags own, 413 for a body over the limit.

// upstreamShapeHint is how a PUT /api/upstreams/{name} body looks.
const upstreamShapeHint = `send {"url":"https://HOST/PATH","auth":"bearer:ENV_NAME"} ("auth" optional, in the form of a row's auth column)`

// errUpstreamCommand refuses a body naming a command: a stdio upstream is code
// run on the node, so only the operator's flags can name one.
var errUpstreamCommand = badRequest(`an upstream registered through the API is streamable HTTP only: "command" cannot be set here, ` +
	"since a command is code run on the node; a stdio upstream is the operator's capdir serve --mcp-stdio 'NAME=COMMAND ARGS…'")

func errUpstreamBody(problem string) error { return badRequest(problem + "; " + upstreamShapeHint) }

func errUpstreamTooLarge() error {
	return command.TooLarge("the upstream registration", -1, maxUpstreamBody)
}

func errUpstreamNotRegistered(name string) error { return &command.UpstreamNotFoundError{Name: name} }

// upstreamNotFoundBody is the 404 of a name no upstream has (notFoundBody).
func upstreamNotFoundBody(e *command.UpstreamNotFoundError) map[string]string {
	return map[string]string{"error": "not_found", "upstream": e.Name, "how_to_fix": "GET /api/upstreams lists the upstreams (capdir upstream list)"}
}
