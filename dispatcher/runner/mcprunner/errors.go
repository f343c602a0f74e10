package mcprunner

import (
	"errors"

	"github.com/capdir/capdir/dispatcher/runner"
)

// RunnerMCP is the runner's name, as a row's runner column spells it.
const RunnerMCP = "mcp"

// Sentinel errors of the mcp runner; every "ERR:mcp:..." literal is built below.
var (
	// ErrBadTarget: the row's target is not "<upstream>/<tool>".
	ErrBadTarget = errors.New("mcp: bad target")
	// ErrUnknownUpstream: no upstream of that name is registered on this node.
	ErrUnknownUpstream = errors.New("mcp: unknown upstream")
	// ErrBadArguments: the call's arguments are not a JSON object.
	ErrBadArguments = errors.New("mcp: bad arguments")
	// ErrUnreachable: the upstream could not be connected to, or its connection
	// failed during the call.
	ErrUnreachable = errors.New("mcp: upstream unreachable")
	// ErrTimeout: the upstream did not answer within the runner's timeout.
	ErrTimeout = errors.New("mcp: timeout")
	// ErrToolError: the tool answered with isError set.
	ErrToolError = errors.New("mcp: tool error")
	// ErrProtocol: the upstream answered with a JSON-RPC error (an unknown tool,
	// arguments its schema refuses) or an answer the client cannot read.
	ErrProtocol = errors.New("mcp: protocol error")

	// ErrBadUpstream: an operator's --mcp-http or --mcp-stdio value is malformed.
	ErrBadUpstream = errors.New("mcprunner: bad upstream")
)

// Sentinels are the package's sentinel errors, for the conformance suite.
var Sentinels = []error{ErrBadTarget, ErrUnknownUpstream, ErrBadArguments, ErrUnreachable, ErrTimeout, ErrToolError, ErrProtocol}

func errBadTarget(target string) *runner.Error {
	return runner.NewError(ErrBadTarget, "ERR:mcp:bad_target:"+target)
}

func errUnknownUpstream(name string) *runner.Error {
	return runner.NewError(ErrUnknownUpstream, "ERR:mcp:unknown_upstream:"+name)
}

func errBadArguments(reason string) *runner.Error {
	return runner.NewError(ErrBadArguments, "ERR:mcp:bad_arguments:"+reason)
}

func errUnreachable(server, reason string) *runner.Error {
	return runner.NewError(ErrUnreachable, "ERR:mcp:"+server+":unreachable:"+reason)
}

func errTimeout(server, tool string) *runner.Error {
	return runner.NewError(ErrTimeout, "ERR:mcp:"+server+":timeout:"+tool)
}

func errToolError(server, text string) *runner.Error {
	return runner.NewError(ErrToolError, "ERR:mcp:"+server+":tool_error:"+text)
}

func errProtocol(server, msg string) *runner.Error {
	return runner.NewError(ErrProtocol, "ERR:mcp:"+server+":protocol:"+msg)
}
