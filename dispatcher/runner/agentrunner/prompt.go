package agentrunner

import (
	"context"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Prompt is the system prompt one row contributes: its content without the
// docstring, i.e. without any line whose first non-space character is '#'
// (contract.StripDocs, as every runner reads its row), trimmed. It is the same
// payload the contract fingerprint covers, so editing a prompt changes the
// fingerprint and editing only its docstring does not.
func Prompt(row *contract.Row) string { return runner.Template(row.Content) }

// promptWithheld stands for the system prompt in the shape a caller other than
// the owner sees (runner.Call.Restricted): the prompt is the owner's, and the
// row's contract document does not show it either.
const promptWithheld = "(withheld: an agent row's prompt is shown to the owner only)"

// systemPrompt composes the system prompt of c: the Prompt of each row named in
// includes, in order, read through c.Sub at call time, then the row's own, joined
// by blank lines; an empty part is skipped.
func systemPrompt(ctx context.Context, c runner.Call) (string, *failure.Error) {
	keys := splitList(c.Row.Includes)
	if len(keys) > 0 && c.Sub == nil {
		return "", errNoInvoker("includes")
	}
	parts := make([]string, 0, len(keys)+1)
	for _, key := range keys {
		if !wire.ValidKey(key) {
			return "", errInclude(shorten(key), "not a row key")
		}
		row, err := c.Sub.Row(ctx, key)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return "", runner.Canceled(RunnerAgent, cerr)
			}
			return "", errInclude(key, err.Error())
		}
		if row == nil {
			return "", errInclude(key, "not found")
		}
		if p := Prompt(row); p != "" {
			parts = append(parts, p)
		}
	}
	if p := Prompt(c.Row); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "\n\n"), nil
}

// splitList splits a comma-separated column, trimming each item and skipping
// blanks.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// shorten bounds a text that came from a row or a model before it goes in a
// literal.
func shorten(s string) string {
	const limit = 128
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "…"
}
