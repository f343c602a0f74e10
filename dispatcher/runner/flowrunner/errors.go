package flowrunner

import (
	"errors"
	"strconv"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the flow runner, the kinds of its failure table's entries.
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

// The flow runner's failures. Each literal is built from its entry, here and
// nowhere else.
var (
	failEmpty = failure.Entry{
		Literal: "ERR:flow:empty", Kind: ErrEmpty, Fault: failure.FaultRow,
		Cause: "the content has no steps once its # lines are removed",
		Fix:   "the owner writes the steps: KEY: args > KEY: $PREV",
	}
	failEmptyStep = failure.Entry{
		Literal: "ERR:flow:empty_step:<n>", Kind: ErrEmptyStep, Fault: failure.FaultRow,
		Cause: "step n (from 1) is blank: two > with nothing between, or one at an end",
		Fix:   "the owner removes the extra >",
	}
	failBadStep = failure.Entry{
		Literal: "ERR:flow:bad_step:<text>", Kind: ErrBadStep, Fault: failure.FaultRow, Doc: failure.DocEvery,
		Cause: "a step has no ':' between its key and its arguments",
		Fix:   "write each step as KEY: args",
	}
	failBadKey = failure.Entry{
		Literal: "ERR:flow:bad_key:<text>", Kind: ErrBadKey, Fault: failure.FaultRow,
		Cause: "the text before a step's ':' is not a row key (A-Z a-z 0-9 _ -)",
		Fix:   "the owner names a row by its key",
	}
	failBadBinding = failure.Entry{
		Literal: "ERR:flow:bad_binding:<name>", Kind: ErrBadBinding, Fault: failure.FaultRow,
		Cause: "what follows => is not a name of capitals, digits and _, or is PREV",
		Fix:   "the owner binds the step to a name like RESULT",
	}
	failDuplicateBinding = failure.Entry{
		Literal: "ERR:flow:duplicate_binding:<name>", Kind: ErrDuplicateBinding, Fault: failure.FaultRow,
		Cause: "two steps or branches bind the same name",
		Fix:   "the owner gives each binding its own name",
	}
	failUnbalanced = failure.Entry{
		Literal: "ERR:flow:unbalanced_braces:<text>", Kind: ErrUnbalanced, Fault: failure.FaultRow,
		Cause: "a } closes nothing, or a { is never closed",
		Fix:   "the owner closes each fan-out once",
	}
	failBadFanout = failure.Entry{
		Literal: "ERR:flow:bad_fanout:<text>", Kind: ErrBadFanout, Fault: failure.FaultRow,
		Cause: "text follows a fan-out's closing brace",
		Fix:   "the owner starts a new step with > after the }",
	}
	failNestedFanout = failure.Entry{
		Literal: "ERR:flow:nested_fanout:<branch>", Kind: ErrNestedFanout, Fault: failure.FaultRow,
		Cause: "a branch of a fan-out is itself a fan-out",
		Fix:   "the owner moves the inner fan-out into a flow row of its own",
	}
	failEmptyBranch = failure.Entry{
		Literal: "ERR:flow:empty_branch:<text>", Kind: ErrEmptyBranch, Fault: failure.FaultRow,
		Cause: "a fan-out has a blank branch",
		Fix:   "the owner removes the extra |",
	}
	failTooManySteps = failure.Entry{
		Literal: "ERR:flow:steps:<n>><max>", Kind: ErrTooManySteps, Fault: failure.FaultRow,
		Cause: "the flow has more steps than the node allows",
		Fix:   "the owner splits the flow into flows of fewer steps",
	}
	failFanoutTooWide = failure.Entry{
		Literal: "ERR:flow:fanout:<n>><max>", Kind: ErrFanoutTooWide, Fault: failure.FaultRow,
		Cause: "a fan-out has more branches than the node allows",
		Fix:   "the owner splits the fan-out",
	}
	failNoInvoker = failure.Entry{
		Literal: "ERR:flow:no_invoker", Kind: ErrNoInvoker, Fault: failure.FaultNode,
		Cause: "the flow was run where nothing can run its steps",
		Fix:   "run the flow through a dispatcher",
	}
	failInvoke = failure.Entry{
		Literal: "ERR:flow:invoke:<step>:<message>", Kind: ErrInvoke, Fault: failure.FaultNode,
		Cause: "the dispatcher could not run a step (not a refusal)",
		Fix:   "read the message; call again once the node is healthy",
	}
	failRefused = failure.Entry{
		Literal: "ERR:flow:refused:<step>:<literal>", Kind: ErrRefused, Fault: failure.FaultCall,
		Cause: "the dispatcher refused a step with a literal that is not ERR: (a token's scope, an unknown key, approval_required); to a token holder, a step to a row it may not call is named by its step number and its refusal without the row's key (ERR:flow:refused:2:scope)",
		Fix:   "read the literal: it is the step's own refusal (the owner reads the step's receipt, a child of the flow's, for its key)",
	}
	failStepFailed = failure.Entry{
		Literal: "ERR:…", Kind: ErrStepFailed, Fault: failure.FaultService,
		Cause: "a step's result began ERR:; the flow stops at the first such step, and that result is the flow's",
		Fix:   "read that step's receipt, then that row's own document",
	}
)

// Failures is the flow runner's failure table.
var Failures = failure.Table{
	failEmpty, failEmptyStep, failBadStep, failBadKey, failBadBinding, failDuplicateBinding,
	failUnbalanced, failBadFanout, failNestedFanout, failEmptyBranch, failTooManySteps,
	failFanoutTooWide, failNoInvoker, failInvoke, failRefused, runner.SubstitutionTooLargeEntry,
	runner.CanceledEntry(runner.RunnerFlow), runner.ResultTooLargeEntry(runner.RunnerFlow), failStepFailed,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

func errEmpty() *failure.Error { return failEmpty.New() }

func errEmptyStep(n int) *failure.Error { return failEmptyStep.New(strconv.Itoa(n)) }

func errBadStep(text string) *failure.Error { return failBadStep.New(text) }

func errBadKey(text string) *failure.Error { return failBadKey.New(text) }

func errBadBinding(name string) *failure.Error { return failBadBinding.New(name) }

func errDuplicateBinding(name string) *failure.Error { return failDuplicateBinding.New(name) }

func errUnbalanced(text string) *failure.Error { return failUnbalanced.New(text) }

func errBadFanout(text string) *failure.Error { return failBadFanout.New(text) }

func errNestedFanout(text string) *failure.Error { return failNestedFanout.New(text) }

func errEmptyBranch(text string) *failure.Error { return failEmptyBranch.New(text) }

func errTooManySteps(n, limit int) *failure.Error {
	return failTooManySteps.New(strconv.Itoa(n), strconv.Itoa(limit))
}

func errFanoutTooWide(n, limit int) *failure.Error {
	return failFanoutTooWide.New(strconv.Itoa(n), strconv.Itoa(limit))
}

func errNoInvoker() *failure.Error { return failNoInvoker.New() }

func errInvoke(step string, err error) *failure.Error { return failInvoke.Wrap(err, step, err.Error()) }

func errRefused(step, literal string) *failure.Error { return failRefused.New(step, literal) }

// errStepFailed carries a step's own ERR: output unchanged.
func errStepFailed(output string) *failure.Error {
	return &failure.Error{Literal: output, Kind: failStepFailed.Kind}
}
