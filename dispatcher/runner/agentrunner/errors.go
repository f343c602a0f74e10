package agentrunner

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// RunnerAgent is the runner's name, as the row's type (or runner column) spells it
// and as its literals begin: ERR:agent:...
const RunnerAgent = "agent"

// Sentinel errors of the agent runner, the kinds of its failure table's entries.
var (
	// ErrNoProvider: no provider prefix matches the row's model id.
	ErrNoProvider = errors.New("agent: no provider")
	// ErrBadModel: the row's target names no model.
	ErrBadModel = errors.New("agent: bad model")
	// ErrAuth: applying the row's credential failed.
	ErrAuth = errors.New("agent: auth")
	// ErrStatus: the model server answered with a status other than 2xx.
	ErrStatus = errors.New("agent: model status")
	// ErrFetch: DNS, TLS or connection failure reaching the model server.
	ErrFetch = errors.New("agent: fetch failed")
	// ErrTimeout: the model server did not answer within the configured timeout.
	ErrTimeout = errors.New("agent: timeout")
	// ErrRequestTooLarge: the conversation outgrew the request cap.
	ErrRequestTooLarge = errors.New("agent: request too large")
	// ErrResponseTooLarge: the model server's response exceeded the response cap.
	ErrResponseTooLarge = errors.New("agent: response too large")
	// ErrBadResponse: the model server's response is not a chat completion.
	ErrBadResponse = errors.New("agent: bad response")
	// ErrStepLimit: the model still asked for tools after the configured number of
	// model requests.
	ErrStepLimit = errors.New("agent: step limit")
	// ErrToolCalls: one model answer called more tools than the configured bound.
	ErrToolCalls = errors.New("agent: too many tool calls")
	// ErrInclude: a prompt block named in includes could not be read.
	ErrInclude = errors.New("agent: include")
	// ErrTools: the tools of allowed_categories could not be listed.
	ErrTools = errors.New("agent: tools")
	// ErrNoInvoker: the row has includes or allowed_categories, and the call came
	// without a runner.Invoker to read or run other rows.
	ErrNoInvoker = errors.New("agent: no invoker")
	// ErrTool: the Invoker failed to run a tool the model called (a refusal by the
	// gate is not this: it is the tool's result).
	ErrTool = errors.New("agent: tool")

	// ErrBadProvider: a provider entry is malformed (ParseProviders).
	ErrBadProvider = errors.New("agentrunner: bad provider")
	// ErrBadPrice: a price entry is malformed (ParsePrices).
	ErrBadPrice = errors.New("agentrunner: bad price")
)

// The agent runner's failures, most specific first. Each literal is built from
// its entry, here and nowhere else.
var (
	failNoProvider = failure.Entry{
		Literal: "ERR:agent:no_provider:<model>", Kind: ErrNoProvider, Fault: failure.FaultRow,
		Cause: "no provider prefix matches the model the row names; nothing was sent",
		Fix:   "the owner prefixes the model with a provider the node knows (--agent-provider)",
	}
	failBadModel = failure.Entry{
		Literal: "ERR:agent:bad_model:<reason>", Kind: ErrBadModel, Fault: failure.FaultRow,
		Cause: "the row's target names no model",
		Fix:   "the owner writes the model id in target",
	}
	failAuth = failure.Entry{
		Literal: "ERR:agent:<KEY>:ERR:auth:…", Kind: ErrAuth, Fault: failure.FaultRow, Doc: failure.DocMalformedAuth,
		Cause: "auth is not bearer:, basic:, headers:, query: or oauth: with a variable name",
		Fix:   "the owner writes a supported form",
	}
	failInclude = failure.Entry{
		Literal: "ERR:agent:include:<KEY>:<reason>", Kind: ErrInclude, Fault: failure.FaultRow,
		Cause: "a prompt block named in includes could not be read (no such row for this caller)",
		Fix:   "the owner names an enabled row the callers may read",
	}
	failTools = failure.Entry{
		Literal: "ERR:agent:tools:<reason>", Kind: ErrTools, Fault: failure.FaultNode,
		Cause: "the rows of allowed_categories could not be listed",
		Fix:   "call again once the node is healthy",
	}
	failNoInvoker = failure.Entry{
		Literal: "ERR:agent:no_invoker:<column>", Kind: ErrNoInvoker, Fault: failure.FaultNode,
		Cause: "the row has includes or allowed_categories and was run where no other row can be read or run",
		Fix:   "run the agent through a dispatcher",
	}
	failTimeout = failure.Entry{
		Literal: "ERR:agent:timeout:<duration>", Kind: ErrTimeout, Fault: failure.FaultService,
		Cause: "one model request did not answer within the agent runner's timeout",
		Fix:   "check the model server, then call again",
	}
	failFetch = failure.Entry{
		Literal: "ERR:agent:fetch:<message>", Kind: ErrFetch, Fault: failure.FaultRow, Doc: failure.DocPlain,
		Cause: "DNS, TLS or connection failure reaching the model server",
		Fix:   "check that the model server the target's model id goes to (its --agent-provider base URL) runs and is reachable",
	}
	failResponseTooLarge = failure.Entry{
		Literal: "ERR:agent:response_too_large:<cap>", Kind: ErrResponseTooLarge, Fault: failure.FaultService,
		Cause: "the model server's answer is over the response cap",
		Fix:   "ask for a shorter answer, or the operator raises the cap",
	}
	failRequestTooLarge = failure.Entry{
		Literal: "ERR:agent:request_too_large:<cap>", Kind: ErrRequestTooLarge, Fault: failure.FaultService,
		Cause: "the conversation with the model, the tools' results included, grew over the request cap; no more tools ran and it was not sent",
		Fix:   "ask for less in one call (tools that answer less), or the operator raises the cap",
	}
	failBadResponse = failure.Entry{
		Literal: "ERR:agent:bad_response:<reason>", Kind: ErrBadResponse, Fault: failure.FaultService,
		Cause: "the model server's answer is not a chat completion",
		Fix:   "point the provider at an OpenAI-compatible /chat/completions",
	}
	failStepLimit = failure.Entry{
		Literal: "ERR:agent:step_limit:<n>", Kind: ErrStepLimit, Fault: failure.FaultCall,
		Cause: "the model still called tools after the step limit of model requests",
		Fix:   "ask for less in one call, or the operator raises the limit",
	}
	failToolCalls = failure.Entry{
		Literal: "ERR:agent:tool_calls:<n>><max>", Kind: ErrToolCalls, Fault: failure.FaultService,
		Cause: "one model answer called more tools than the agent runner takes at once; none of them ran",
		Fix:   "ask for less in one call, or the operator raises the bound",
	}
	failTool = failure.Entry{
		Literal: "ERR:agent:tool:<KEY>:<reason>", Kind: ErrTool, Fault: failure.FaultNode,
		Cause: "a tool the model called could not be run (not a refusal: that is the tool's result)",
		Fix:   "read the reason; call again once the node is healthy",
	}
	failToolNotOffered = failure.Entry{
		Literal: "ERR:agent:tool_not_offered:<name>: call only the tools listed in this request", Fault: failure.FaultService,
		Cause: "the model called a tool it was not offered; it was not invoked, and the model is told so",
		Fix:   "nothing: the model reads this as the tool's result",
	}
	failBadToolArguments = failure.Entry{
		Literal: "ERR:agent:bad_tool_arguments:<name>:<reason>", Fault: failure.FaultService,
		Cause: "the model called a tool with arguments that are not a JSON object; it was not invoked",
		Fix:   "nothing: the model reads this as the tool's result",
	}
	failUnauthorized = failure.Entry{
		Literal: "ERR:agent:401:<body>", Kind: ErrStatus, Fault: failure.FaultService, Doc: failure.DocCredential,
		Cause: "the credential is set but the upstream refuses it",
		Fix:   "rotate the secret; the row is fine",
	}
	failStatus = failure.Entry{
		Literal: "ERR:agent:<status>:<body>", Kind: ErrStatus, Fault: failure.FaultCall, Doc: failure.DocPlain,
		Cause: "the upstream refused the call",
		Fix:   "check the arguments against ARGS in shape mode",
	}
)

// Failures is the agent runner's failure table.
var Failures = failure.Table{
	failNoProvider, failBadModel, failAuth, failInclude, failTools, failNoInvoker, failTimeout,
	failFetch, failRequestTooLarge, failResponseTooLarge, failBadResponse, failStepLimit, failToolCalls, failTool, failToolNotOffered,
	failBadToolArguments, runner.CanceledEntry(RunnerAgent), runner.ResultTooLargeEntry(RunnerAgent),
	failUnauthorized, failStatus,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

func errNoProvider(model string) *failure.Error { return failNoProvider.New(model) }

func errBadModel(reason string) *failure.Error { return failBadModel.New(reason) }

// errAuth wraps an auth failure (ERR:auth:…) as ERR:agent:<KEY>:ERR:auth:…, as the
// http runner does.
func errAuth(key string, err error) *failure.Error {
	return failAuth.Wrap(err, key, strings.TrimPrefix(err.Error(), "ERR:auth:"))
}

// errStatus is ERR:agent:<status>:<body>, body already scrubbed.
func errStatus(status int, body string) *failure.Error {
	if status == http.StatusUnauthorized {
		return failUnauthorized.New(body)
	}
	return failStatus.New(strconv.Itoa(status), body)
}

// bodyNotShown stands for an error body over the result cap in errStatus.
func bodyNotShown(n int, limit int64) string {
	return "(a body of " + strconv.Itoa(n) + " bytes, over the result cap of " + strconv.FormatInt(limit, 10) + ", not shown)"
}

func errFetch(msg string) *failure.Error { return failFetch.New(msg) }

func errTimeout(d time.Duration) *failure.Error { return failTimeout.New(d.String()) }

func errResponseTooLarge(limit int64) *failure.Error {
	return failResponseTooLarge.New(strconv.FormatInt(limit, 10))
}

func errRequestTooLarge(limit int64) *failure.Error {
	return failRequestTooLarge.New(strconv.FormatInt(limit, 10))
}

func errBadResponse(reason string) *failure.Error { return failBadResponse.New(reason) }

func errStepLimit(n int) *failure.Error { return failStepLimit.New(strconv.Itoa(n)) }

func errToolCalls(n, limit int) *failure.Error {
	return failToolCalls.New(strconv.Itoa(n), strconv.Itoa(limit))
}

func errInclude(key, reason string) *failure.Error { return failInclude.New(key, reason) }

func errTools(reason string) *failure.Error { return failTools.New(reason) }

// errNoInvoker names the column that needs one: includes or allowed_categories.
func errNoInvoker(column string) *failure.Error { return failNoInvoker.New(column) }

func errTool(key, reason string) *failure.Error { return failTool.New(key, reason) }

// The texts a tool message gives the model instead of a result; nothing was invoked.

// toolNotOffered answers a call to a tool that was not in the request's tools.
func toolNotOffered(name string) string { return failToolNotOffered.Fill(name) }

// badToolArguments answers a call whose arguments could not be read.
func badToolArguments(name, reason string) string { return failBadToolArguments.Fill(name, reason) }
