package fnrunner

import (
	"errors"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the fn runner, the kinds of its failure table's entries.
var (
	// ErrUnknownTarget: the fn row names a function absent from the registry.
	ErrUnknownTarget = errors.New("fn: unknown target")
	// ErrBadContentJSON: the substituted template is not valid JSON.
	ErrBadContentJSON = errors.New("fn: content is not JSON")
	// ErrContentNotArray: the substituted template is JSON but not an array.
	ErrContentNotArray = errors.New("fn: content is not an array")
	// ErrFailed: the function returned an error.
	ErrFailed = errors.New("fn: function failed")
	// ErrNoReplyBlock: last_reply_of found no complete [REPLY]...[/REPLY] block.
	ErrNoReplyBlock = errors.New("no_reply_block")
)

// The fn runner's failures. Each literal is built from its entry, here and
// nowhere else.
var (
	failUnknownTarget = failure.Entry{
		Literal: "ERR:fn:unknown_target:<name>", Kind: ErrUnknownTarget, Fault: failure.FaultRow, Doc: failure.DocEvery,
		Cause: "target names no function registered on this node",
		Fix:   "correct the target; a function renamed in a deploy needs its new name",
	}
	failBadContentJSON = failure.Entry{
		Literal: "ERR:fn:bad_content_json:<message>", Kind: ErrBadContentJSON, Fault: failure.FaultCall, Doc: failure.DocEvery,
		Cause: "the template is not valid JSON once the arguments are in",
		Fix:   "look for an unescaped quote in an argument; see the call in shape mode",
	}
	failContentNotArray = failure.Entry{
		Literal: "ERR:fn:content_not_array", Kind: ErrContentNotArray, Fault: failure.FaultRow, Doc: failure.DocEvery,
		Cause: "the template is valid JSON but not an array",
		Fix:   `wrap it: ["$1","$2"]`,
	}
	failFailed = failure.Entry{
		Literal: "ERR:fn:<name>:<error>", Kind: ErrFailed, Fault: failure.FaultService,
		Cause: "the function ran and returned an error",
		Fix:   "read the error: it is the function's own message about its arguments",
	}
)

// Failures is the fn runner's failure table.
var Failures = failure.Table{
	failUnknownTarget, failBadContentJSON, failContentNotArray, runner.SubstitutionTooLargeEntry,
	runner.CanceledEntry(runner.RunnerFn), runner.ResultTooLargeEntry(runner.RunnerFn), failFailed,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

func errUnknownTarget(name string) *failure.Error { return failUnknownTarget.New(name) }

func errBadContentJSON(msg string) *failure.Error { return failBadContentJSON.New(msg) }

func errContentNotArray() *failure.Error { return failContentNotArray.New() }

func errFailed(target string, err error) *failure.Error {
	return failFailed.Wrap(err, target, err.Error())
}
