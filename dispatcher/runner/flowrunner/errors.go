package flowrunner

import (
	"errors"
	"strconv"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the flow runner; every "ERR:flow:..." literal is built below.
var (
	// ErrEmpty: the content has no executable text once its # lines are removed.
	ErrEmpty = errors.New("flow: empty")
	// ErrEmptyStep: a step between two ">" (or before the first, after the last) is blank.
	ErrEmptyStep = errors.New("flow: empty step")
	// ErrBadStep: a step has no ":" separating its key from its body.
	ErrBadStep = errors.New("flow: bad step")
	// ErrBadKey: the text before a step's ":" is not a row key (A-Z a-z 0-9 _ -).
	ErrBadKey = errors.New("flow: bad key")
	// ErrBadBinding: what follows "=>" is not a name [A-Z_][A-Z0-9_]*, or is PREV.
	ErrBadBinding = errors.New("flow: bad binding")
	// ErrDuplicateBinding: two steps or branches bind the same name.
	ErrDuplicateBinding = errors.New("flow: duplicate binding")
	// ErrUnbalanced: a "}" closes nothing, or a "{" is never closed.
	ErrUnbalanced = errors.New("flow: unbalanced braces")
	// ErrBadFanout: text follows a fan-out's closing brace.
	ErrBadFanout = errors.New("flow: bad fan-out")
	// ErrNestedFanout: a fan-out branch is itself a fan-out.
	ErrNestedFanout = errors.New("flow: nested fan-out")
	// ErrEmptyBranch: a fan-out has a blank branch ("{ A: x | }", "{ }").
	ErrEmptyBranch = errors.New("flow: empty branch")
	// ErrTooManySteps: the flow has more steps than Config.MaxSteps.
	ErrTooManySteps = errors.New("flow: too many steps")
	// ErrFanoutTooWide: a fan-out has more branches than Config.MaxFanout.
	ErrFanoutTooWide = errors.New("flow: fan-out too wide")
	// ErrNoInvoker: the call carries no runner.Invoker to run the steps with.
	ErrNoInvoker = errors.New("flow: no invoker")
	// ErrInvoke: the Invoker failed to run a step (not a refusal: a refusal is a
	// step outcome).
	ErrInvoke = errors.New("flow: invoke failed")
	// ErrRefused: the dispatcher refused a step with a literal that does not start
	// with "ERR:" (a token's scope, an unknown key).
	ErrRefused = errors.New("flow: step refused")
	// ErrStepFailed: a step's output starts with "ERR:"; that output, as it is, is
	// the flow's result.
	ErrStepFailed = errors.New("flow: step failed")
)

const prefix = "ERR:" + runner.RunnerFlow + ":"

func errEmpty() *runner.Error { return runner.NewError(ErrEmpty, prefix+"empty") }

func errEmptyStep(n int) *runner.Error {
	return runner.NewError(ErrEmptyStep, prefix+"empty_step:"+strconv.Itoa(n))
}

func errBadStep(text string) *runner.Error {
	return runner.NewError(ErrBadStep, prefix+"bad_step:"+text)
}

func errBadKey(text string) *runner.Error {
	return runner.NewError(ErrBadKey, prefix+"bad_key:"+text)
}

func errBadBinding(name string) *runner.Error {
	return runner.NewError(ErrBadBinding, prefix+"bad_binding:"+name)
}

func errDuplicateBinding(name string) *runner.Error {
	return runner.NewError(ErrDuplicateBinding, prefix+"duplicate_binding:"+name)
}

func errUnbalanced(text string) *runner.Error {
	return runner.NewError(ErrUnbalanced, prefix+"unbalanced_braces:"+text)
}

func errBadFanout(text string) *runner.Error {
	return runner.NewError(ErrBadFanout, prefix+"bad_fanout:"+text)
}

func errNestedFanout(text string) *runner.Error {
	return runner.NewError(ErrNestedFanout, prefix+"nested_fanout:"+text)
}

func errEmptyBranch(text string) *runner.Error {
	return runner.NewError(ErrEmptyBranch, prefix+"empty_branch:"+text)
}

func errTooManySteps(n, limit int) *runner.Error {
	return runner.NewError(ErrTooManySteps, prefix+"steps:"+strconv.Itoa(n)+">"+strconv.Itoa(limit))
}

func errFanoutTooWide(n, limit int) *runner.Error {
	return runner.NewError(ErrFanoutTooWide, prefix+"fanout:"+strconv.Itoa(n)+">"+strconv.Itoa(limit))
}

func errNoInvoker() *runner.Error { return runner.NewError(ErrNoInvoker, prefix+"no_invoker") }

func errInvoke(step string, err error) *runner.Error {
	return &runner.Error{Kind: errors.Join(ErrInvoke, err), Text: prefix + "invoke:" + step + ":" + err.Error()}
}

func errRefused(step, literal string) *runner.Error {
	return runner.NewError(ErrRefused, prefix+"refused:"+step+":"+literal)
}

// errStepFailed carries a step's own ERR: output unchanged.
func errStepFailed(output string) *runner.Error { return runner.NewError(ErrStepFailed, output) }
