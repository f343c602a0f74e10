package mcprunner

import (
	"errors"
	"fmt"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// RunnerMCP is the runner's name, as a row's runner column spells it.
const RunnerMCP = "mcp"

// Sentinel errors of the mcp runner, the kinds of its failure table's entries.
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

	// errAnswerTooLarge: an HTTP upstream's JSON answer is over MaxAnswerBytes;
	// the call fails as unreachable with it as the reason.
	errAnswerTooLarge = fmt.Errorf("the upstream's answer is over %d bytes; not read further", MaxAnswerBytes)
)

// Sentinels are the package's sentinel errors, for the conformance suite.
var Sentinels = []error{ErrBadTarget, ErrUnknownUpstream, ErrBadArguments, ErrUnreachable, ErrTimeout, ErrToolError, ErrProtocol}

// The mcp runner's failures. Each literal is built from its entry, here and
// nowhere else.
var (
	failBadTarget = failure.Entry{
		Literal: "ERR:mcp:bad_target:<target>", Kind: ErrBadTarget, Fault: failure.FaultRow,
		Cause: "the target is not <upstream>/<tool>",
		Fix:   "the owner writes the target as the upstream's name, a slash and the tool's name",
	}
	failUnknownUpstream = failure.Entry{
		Literal: "ERR:mcp:unknown_upstream:<name>", Kind: ErrUnknownUpstream, Fault: failure.FaultNode, Doc: failure.DocEvery,
		Cause: "this node was not started with that upstream",
		Fix:   "the operator starts capdir with --mcp-http or --mcp-stdio naming it",
	}
	failBadArguments = failure.Entry{
		Literal: "ERR:mcp:bad_arguments:<reason>", Kind: ErrBadArguments, Fault: failure.FaultCall,
		Cause: "the body or the template did not give a JSON object",
		Fix:   `send the arguments as one JSON object, e.g. {"query":"x"}`,
	}
	failUnreachable = failure.Entry{
		Literal: "ERR:mcp:<server>:unreachable:<reason>", Kind: ErrUnreachable, Fault: failure.FaultService, Doc: failure.DocEvery,
		Cause: "the upstream could not be reached, or its connection broke during the call",
		Fix:   "check that the upstream runs, then call again",
	}
	failTimeout = failure.Entry{
		Literal: "ERR:mcp:<server>:timeout:<tool>", Kind: ErrTimeout, Fault: failure.FaultService,
		Cause: "no answer within --mcp-timeout",
		Fix:   "check the upstream's health, then call again",
	}
	failToolError = failure.Entry{
		Literal: "ERR:mcp:<server>:tool_error:<text>", Kind: ErrToolError, Fault: failure.FaultCall, Doc: failure.DocEvery,
		Cause: "the tool answered with isError",
		Fix:   "read the tool's text: it says what it could not do with these arguments",
	}
	failProtocol = failure.Entry{
		Literal: "ERR:mcp:<server>:protocol:<message>", Kind: ErrProtocol, Fault: failure.FaultService,
		Cause: "the upstream answered with a JSON-RPC error (an unknown tool, arguments it refuses)",
		Fix:   "read the message; a tool gone from the upstream leaves the directory at the next sync",
	}
)

// Failures is the mcp runner's failure table.
var Failures = failure.Table{
	failBadTarget, failUnknownUpstream, failBadArguments, runner.SubstitutionTooLargeEntry,
	runner.CanceledEntry(RunnerMCP), runner.ResultTooLargeEntry(RunnerMCP),
	failUnreachable, failTimeout, failToolError, failProtocol,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

func errBadTarget(target string) *failure.Error { return failBadTarget.New(target) }

func errUnknownUpstream(name string) *failure.Error { return failUnknownUpstream.New(name) }

func errBadArguments(reason string) *failure.Error { return failBadArguments.New(reason) }

func errUnreachable(server, reason string) *failure.Error { return failUnreachable.New(server, reason) }

func errTimeout(server, tool string) *failure.Error { return failTimeout.New(server, tool) }

func errToolError(server, text string) *failure.Error { return failToolError.New(server, text) }

func errProtocol(server, msg string) *failure.Error { return failProtocol.New(server, msg) }
