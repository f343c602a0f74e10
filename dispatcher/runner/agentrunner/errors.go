package agentrunner

import (
	"errors"
	"strconv"
	"time"

	"github.com/capdir/capdir/dispatcher/runner"
)

// RunnerAgent is the runner's name, as the row's type (or runner column) spells it
// and as its literals begin: ERR:agent:...
const RunnerAgent = "agent"

// Sentinel errors of the agent runner; every "ERR:agent:..." literal is built below.
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
	// ErrResponseTooLarge: the model server's response exceeded the response cap.
	ErrResponseTooLarge = errors.New("agent: response too large")
	// ErrBadResponse: the model server's response is not a chat completion.
	ErrBadResponse = errors.New("agent: bad response")
	// ErrStepLimit: the model still asked for tools after the configured number of
	// model requests.
	ErrStepLimit = errors.New("agent: step limit")
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

func errNoProvider(model string) *runner.Error {
	return runner.NewError(ErrNoProvider, "ERR:agent:no_provider:"+model)
}

func errBadModel(reason string) *runner.Error {
	return runner.NewError(ErrBadModel, "ERR:agent:bad_model:"+reason)
}

// errAuth wraps an auth failure as ERR:agent:<KEY>:ERR:auth:..., as the http
// runner does.
func errAuth(key string, err error) *runner.Error {
	return &runner.Error{Kind: errors.Join(ErrAuth, err), Text: "ERR:agent:" + key + ":" + err.Error()}
}

// errStatus is ERR:agent:<status>:<body>, body already scrubbed.
func errStatus(status int, body string) *runner.Error {
	return runner.NewError(ErrStatus, "ERR:agent:"+strconv.Itoa(status)+":"+body)
}

// bodyNotShown stands for an error body over the result cap in errStatus.
func bodyNotShown(n int, limit int64) string {
	return "(a body of " + strconv.Itoa(n) + " bytes, over the result cap of " + strconv.FormatInt(limit, 10) + ", not shown)"
}

func errFetch(msg string) *runner.Error {
	return runner.NewError(ErrFetch, "ERR:agent:fetch:"+msg)
}

func errTimeout(d time.Duration) *runner.Error {
	return runner.NewError(ErrTimeout, "ERR:agent:timeout:"+d.String())
}

func errResponseTooLarge(limit int64) *runner.Error {
	return runner.NewError(ErrResponseTooLarge, "ERR:agent:response_too_large:"+strconv.FormatInt(limit, 10))
}

func errBadResponse(reason string) *runner.Error {
	return runner.NewError(ErrBadResponse, "ERR:agent:bad_response:"+reason)
}

func errStepLimit(n int) *runner.Error {
	return runner.NewError(ErrStepLimit, "ERR:agent:step_limit:"+strconv.Itoa(n))
}

func errInclude(key, reason string) *runner.Error {
	return runner.NewError(ErrInclude, "ERR:agent:include:"+key+":"+reason)
}

func errTools(reason string) *runner.Error {
	return runner.NewError(ErrTools, "ERR:agent:tools:"+reason)
}

// errNoInvoker names the column that needs one: includes or allowed_categories.
func errNoInvoker(column string) *runner.Error {
	return runner.NewError(ErrNoInvoker, "ERR:agent:no_invoker:"+column)
}

func errTool(key, reason string) *runner.Error {
	return runner.NewError(ErrTool, "ERR:agent:tool:"+key+":"+reason)
}

// The texts a tool message gives the model instead of a result; nothing was invoked.

// toolNotOffered answers a call to a tool that was not in the request's tools.
func toolNotOffered(name string) string {
	return "ERR:agent:tool_not_offered:" + name + ": call only the tools listed in this request"
}

// badToolArguments answers a call whose arguments could not be read.
func badToolArguments(name, reason string) string {
	return "ERR:agent:bad_tool_arguments:" + name + ":" + reason
}
