package agentrunner

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// MaxToolNameLen is the longest tool name OpenAI-compatible servers accept; a row
// whose key is longer is not offered as a tool.
const MaxToolNameLen = 64

// toolbox is what one call offers the model.
type toolbox struct {
	defs   []toolDef
	byName map[string]runner.Tool
}

// offer lists the rows of the row's allowed_categories through c.Sub: none when
// the column is empty. A tool whose key is no valid tool name, or repeats one
// already offered, is left out; one without usable Parameters gets the args form.
func offer(ctx context.Context, c runner.Call) (toolbox, *failure.Error) {
	cats := strings.TrimSpace(c.Row.AllowedCategories)
	if cats == "" {
		return toolbox{}, nil
	}
	if c.Sub == nil {
		return toolbox{}, errNoInvoker("allowed_categories")
	}
	tools, err := c.Sub.Tools(ctx, cats)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return toolbox{}, runner.Canceled(RunnerAgent, cerr)
		}
		return toolbox{}, errTools(err.Error())
	}
	tb := toolbox{byName: make(map[string]runner.Tool, len(tools))}
	for _, t := range tools {
		if !validToolName(t.Key) || tb.byName[t.Key].Key != "" {
			continue
		}
		if len(t.Parameters) == 0 || !json.Valid(t.Parameters) {
			t.Parameters, t.Schema = runner.ArgsParameters(""), false
		}
		tb.byName[t.Key] = t
		tb.defs = append(tb.defs, toolDef{Type: "function", Function: functionDef{
			Name: t.Key, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	return tb, nil
}

// validToolName: 1 to MaxToolNameLen characters of A-Z a-z 0-9 _ -.
func validToolName(s string) bool {
	if s == "" || len(s) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// call runs the model's n-th tool call of this invocation as step "tool-<n>" and
// returns the content of the tool message that answers it, and the step when one
// ran. A tool that was not offered, or arguments that cannot be read, are answered
// with a message saying so and nothing is invoked. The body is scrubbed of the
// model credential, which never leaves for another row.
func (tb toolbox) call(ctx context.Context, c runner.Call, n int, tc toolCall, rd runner.Redactor) (string, *runner.Step, *failure.Error) {
	name := tc.Function.Name
	t, ok := tb.byName[name]
	if !ok {
		return toolNotOffered(shorten(name)), nil, nil
	}
	in, reason := runner.ToolBody(t, string(tc.Function.Arguments))
	if reason != "" {
		return badToolArguments(name, reason), nil, nil
	}
	in.Body = rd.Scrub(in.Body)
	if in.Args != nil {
		in.Args = json.RawMessage(rd.Scrub(string(in.Args)))
	}
	st, err := c.Sub.Invoke(ctx, "tool-"+strconv.Itoa(n), t.Key, in)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", nil, runner.Canceled(RunnerAgent, cerr)
		}
		return "", nil, errTool(t.Key, err.Error())
	}
	return st.Result, &st, nil
}
