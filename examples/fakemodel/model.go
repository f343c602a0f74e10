package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
)

// reply is the fake model's answer to one chat completion request: a function of
// the request alone, so the same conversation always gets the same answer.
func reply(req agenttest.Request) agenttest.Reply {
	var rep agenttest.Reply
	switch name, result, ok := lastToolResult(req); {
	case ok:
		rep = agenttest.Answer(fmt.Sprintf("%s says: %s", name, result))
	case len(req.Chat.Tools) > 0:
		tool := chooseTool(req.Chat.Tools, req.User())
		rep = agenttest.Call(tool.Name, arguments(tool, req.User()))
	default:
		rep = agenttest.Answer(fmt.Sprintf("%s heard: %s", req.Chat.Model, req.User()))
	}
	rep.Usage = agenttest.Usage{PromptTokens: int64(len(req.Body)+3) / 4, CompletionTokens: int64(len(rep.Content)+3) / 4}
	return rep
}

// lastToolResult is the last tool message of the request and the name of the tool
// its call named.
func lastToolResult(req agenttest.Request) (name, result string, ok bool) {
	msgs := req.Chat.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "tool" {
			continue
		}
		for _, m := range msgs[:i] {
			for _, tc := range m.ToolCalls {
				if tc.ID == msgs[i].ToolCallID {
					name = tc.Name
				}
			}
		}
		return name, msgs[i].Content, true
	}
	return "", "", false
}

// chooseTool is the first tool whose name the user message holds, in any case, else
// the first tool.
func chooseTool(tools []agenttest.Tool, user string) agenttest.Tool {
	upper := strings.ToUpper(user)
	for _, t := range tools {
		if strings.Contains(upper, strings.ToUpper(t.Name)) {
			return t
		}
	}
	return tools[0]
}

// arguments are the tool call's arguments: the user message as "args", or the
// message itself when it is a JSON object and the tool's parameters name no "args".
func arguments(tool agenttest.Tool, user string) string {
	var params struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(tool.Parameters, &params)
	var obj map[string]json.RawMessage
	if _, takesArgs := params.Properties["args"]; !takesArgs && json.Unmarshal([]byte(user), &obj) == nil {
		return user
	}
	b, _ := json.Marshal(map[string]string{"args": user})
	return string(b)
}
