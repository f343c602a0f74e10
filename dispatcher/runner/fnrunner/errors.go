package fnrunner

import (
	"errors"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the fn runner; every "ERR:fn:..." literal is built below.
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

func errUnknownTarget(name string) *runner.Error {
	return runner.NewError(ErrUnknownTarget, "ERR:fn:unknown_target:"+name)
}

func errBadContentJSON(msg string) *runner.Error {
	return runner.NewError(ErrBadContentJSON, "ERR:fn:bad_content_json:"+msg)
}

func errContentNotArray() *runner.Error {
	return runner.NewError(ErrContentNotArray, "ERR:fn:content_not_array")
}

func errFailed(target string, err error) *runner.Error {
	return &runner.Error{Kind: errors.Join(ErrFailed, err), Text: "ERR:fn:" + target + ":" + err.Error()}
}
