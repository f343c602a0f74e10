package runner

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
)

// Runner names, as the row's runner column (or its type) spells them.
const (
	RunnerFn   = "fn"
	RunnerHTTP = "http"
	RunnerNATS = contract.RunnerNATS
	RunnerFlow = contract.TypeFlow
)

// DefaultMaxResultBytes caps a runner's result when its configuration leaves the
// cap at 0: a larger result is refused with ERR:<runner>:result_too_large:<cap>.
const DefaultMaxResultBytes = 1 << 20 // 1 MiB

// Call is one invocation handed to a runner.
type Call struct {
	// Row is the row to run; required.
	Row  *contract.Row
	Body string
	// Args are the positional arguments; nil means SplitArgs(Body).
	Args []string
	// Vars resolve $NAME placeholders ($PREV and flow bindings).
	Vars map[string]string
	// Shape asks for the fully built request without sending it.
	Shape bool
	// Restricted reports that the caller is not the owner (a token holder): shape
	// mode then shows it no more than the row's contract document does. A flow's
	// steps to rows the caller may not call (Sub.Row refuses them) are shown as
	// withheld, their keys and bodies left out; an agent's request is shown
	// without the system prompt (the row's content and its includes).
	Restricted bool
	// Sub lets a runner that composes other rows (flow, agent) run them as real
	// invocations on behalf of this call; nil where the dispatcher offers none.
	Sub Invoker
}

// Invoker runs other rows for a call that composes them. Each Invoke is a real
// invocation: it passes the same gate as the parent (the parent caller's
// credential and scope apply), gets its own receipt naming the parent invocation
// and sharing its trace, and is counted against the configured depth and fan-out
// bounds. Implementations are safe for concurrent use and honour ctx.
type Invoker interface {
	// Invoke runs key with in as step name of the parent call (name is unique
	// within the parent, e.g. "1", "2.A", "tool-3": a redelivered parent finds the
	// step's receipt by it and does not run it again). A refusal by the gate is not
	// an error: it is a Step whose Result is the refusal's literal reason.
	Invoke(ctx context.Context, name, key string, in Input) (Step, error)
	// Tools lists the enabled rows in the given categories ("*" for all; a
	// comma-separated list otherwise) that the parent caller may invoke.
	Tools(ctx context.Context, categories string) ([]Tool, error)
	// Row reads one row as the parent caller may see it (agent includes).
	Row(ctx context.Context, key string) (*contract.Row, error)
}

// Input is what a row is invoked with: a pipe body, or, for a row with its own
// input_schema, one JSON object of named arguments (Args), which the gate
// validates as it is and runs as its pipe form, as POST /api/dispatch does with
// an object body. Args is nil for a pipe body; an Input carries one or the
// other.
type Input struct {
	Body string
	Args json.RawMessage
}

// Pipe is the Input of the pipe body body.
func Pipe(body string) Input { return Input{Body: body} }

// Text is what in sends, as text: the arguments object's, else the pipe body.
func (in Input) Text() string {
	if in.Args != nil {
		return string(in.Args)
	}
	return in.Body
}

// Step is the outcome of one invocation made through an Invoker.
type Step struct {
	InvocationID string
	Status       string // the step receipt's status
	Result       string
	OK           bool
	CostUSD      float64
}

// Tool is a row offered to a model as a callable tool.
type Tool struct {
	Key         string
	Description string
	// Parameters is the JSON Schema of the arguments: the row's input_schema, or
	// {"type":"object","properties":{"args":{"type":"string"}}}.
	Parameters json.RawMessage
	// Schema reports whether Parameters is the row's own input_schema (arguments
	// are then sent as a JSON object), not the single args string.
	Schema bool
}

// Arguments returns the positional arguments of c.
func (c Call) Arguments() []string {
	if c.Args != nil {
		return c.Args
	}
	return SplitArgs(c.Body)
}

// Outcome is what a runner reports. A runner never returns a Go error: every failure
// is an Outcome whose Result starts with "ERR:" and whose Err carries the sentinel.
type Outcome struct {
	Result   string         // text returned to the caller: "HTTP 200:{...}", fn output, or "ERR:..."
	Ran      bool           // the target was reached (fn executed / upstream answered)
	Upstream int            // upstream HTTP status, 0 if none
	Shape    map[string]any // shape mode: the fully built outbound request, redacted
	CredTag  string         // Credential.Tag of the credential applied, "" if none
	CostUSD  float64
	// Children are the invocation ids of the invocations a composing runner (flow,
	// agent) made through Call.Sub, in the order it made them (a fan-out's branches
	// in branch order), for the receipt tree; nil for a runner that composes none.
	Children []string
	// Err is the typed failure behind an "ERR:" Result produced by the dispatcher
	// (match with errors.Is); nil on success and when a function or a NATS responder
	// itself answered with text starting "ERR:".
	Err error

	// PromptTokens and CompletionTokens are the model tokens a call used, summed
	// over its model requests (the agent runner); 0 for runners that call no model.
	PromptTokens     int64
	CompletionTokens int64
}

// OK reports whether the result is not an "ERR:" string.
func (o Outcome) OK() bool { return !strings.HasPrefix(o.Result, "ERR:") }

// Failed turns a runner error into an Outcome.
func Failed(err *failure.Error) Outcome { return Outcome{Result: err.Literal, Err: err} }

// FailedWith turns an error that carries a *failure.Error (what Substitute and ApplyAuth
// return, or one wrapping it) into an Outcome with its literal; Err is err itself.
// Any other error, which would be a bug, becomes ERR:runner:<message>.
func FailedWith(err error) Outcome {
	if literal, ok := failure.LiteralOf(err); ok {
		return Outcome{Result: literal, Err: err}
	}
	return Outcome{Result: failBug.Fill(err.Error()), Err: err}
}

// Shaped is the Outcome of shape mode: Shape is set and Result is its JSON.
func Shaped(shape map[string]any) Outcome {
	b, err := json.Marshal(shape)
	if err != nil { // only plain JSON values are ever put in a shape
		panic("runner: shape is not JSON: " + err.Error())
	}
	return Outcome{Result: string(b), Shape: shape}
}

// Runner executes one row. Run must be safe for concurrent use, must return promptly
// once ctx is done (with an "ERR:<runner>:canceled:..." or timeout Outcome), and
// must never put a secret value in the Outcome.
type Runner interface {
	Run(ctx context.Context, c Call) Outcome
}

// Runners maps a runner name ("fn", "http", "nats", ...) to its Runner. Build it once
// and treat it as read-only afterwards; it is then safe for concurrent use.
type Runners map[string]Runner

// Lookup returns the runner called name, or ERR:runner:unknown:<name>.
func (rs Runners) Lookup(name string) (Runner, error) {
	if r, ok := rs[name]; ok && r != nil {
		return r, nil
	}
	return nil, errUnknownRunner(name)
}

// Run dispatches c to the row's effective runner (the runner column, else the type).
func (rs Runners) Run(ctx context.Context, c Call) Outcome {
	name := c.Row.EffectiveRunner()
	r, ok := rs[name]
	if !ok || r == nil {
		return Failed(errUnknownRunner(name))
	}
	return r.Run(ctx, c)
}

// Documented is a Runner that exports its failure table: every literal its
// failures begin with, what each means and what fixes it.
type Documented interface {
	Failures() failure.Table
}

// Tables gives the failure table of a runner by its name: Runners, and the
// dispatch service that runs them, are one.
type Tables interface {
	Failures(name string) failure.Table
}

// TableOf is the failure table of row's runner that src gives when it is a
// Tables (a facade's dispatcher, say); nil when it is none. A contract document
// takes its row's runner's literals from it (contract.DocContext.Failures).
func TableOf(src any, row *contract.Row) failure.Table {
	if t, ok := src.(Tables); ok && t != nil {
		return t.Failures(row.EffectiveRunner())
	}
	return nil
}

// Failures is the failure table of the runner called name; nil when there is no
// such runner or it exports none.
func (rs Runners) Failures(name string) failure.Table {
	if d, ok := rs[name].(Documented); ok {
		return d.Failures()
	}
	return nil
}

// Checker is a Runner that can tell, before any call, the failure every call of
// a row will have: Check returns it (a *failure.Error whose text is the literal the call
// fails with) or nil when a call may run. It runs nothing and must be safe for
// concurrent use. The write path answers it as a warning: the row is written all
// the same, since what it lacks (a function renamed by a deploy) may come later.
type Checker interface {
	Check(row *contract.Row) error
}

// Check is the failure every call of row will have, as its effective runner's
// Checker tells it; nil when that runner has none or a call may run. A runner
// this node does not have is not a failure here: another node may have it.
func (rs Runners) Check(row *contract.Row) error {
	if c, ok := rs[row.EffectiveRunner()].(Checker); ok {
		return c.Check(row)
	}
	return nil
}

// Template returns the executable payload of content: contract.StripDocs.
func Template(content string) string { return contract.StripDocs(content) }
