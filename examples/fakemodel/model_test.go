package main

import (
	"encoding/json"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
)

func request(t *testing.T, body string) agenttest.Request {
	t.Helper()
	req := agenttest.Request{Body: []byte(body)}
	if err := json.Unmarshal(req.Body, &req.Chat); err != nil {
		t.Fatal(err)
	}
	return req
}

const (
	argsTool   = `{"type":"function","function":{"name":"GREET","parameters":{"type":"object","properties":{"args":{"type":"string"}}}}}`
	schemaTool = `{"type":"function","function":{"name":"POINT","parameters":{"type":"object","properties":{"latitude":{"type":"number"}}}}}`
)

func TestReply(t *testing.T) {
	for _, tc := range []struct {
		name, body     string
		content        string
		callName, args string
	}{
		{"no tools: heard", `{"model":"demo","messages":[{"role":"user","content":"hi"}]}`, "demo heard: hi", "", ""},
		{"a tool: called with the message as args", `{"model":"demo","messages":[{"role":"user","content":"Ada"}],"tools":[` + argsTool + `]}`,
			"", "GREET", `{"args":"Ada"}`},
		{"the tool the message names", `{"model":"demo","messages":[{"role":"user","content":"{\"latitude\":1} for point"}],"tools":[` + argsTool + `,` + schemaTool + `]}`,
			"", "POINT", `{"args":"{\"latitude\":1} for point"}`},
		{"a schema tool takes a JSON object as it is", `{"model":"demo","messages":[{"role":"user","content":"{\"latitude\":1}"}],"tools":[` + schemaTool + `]}`,
			"", "POINT", `{"latitude":1}`},
		{"a tool result: answered with it", `{"model":"demo","messages":[{"role":"user","content":"Ada"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"GREET","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"Hello, Ada!"}],"tools":[` + argsTool + `]}`,
			"GREET says: Hello, Ada!", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.body)
			rep := reply(req)
			if rep.Content != tc.content {
				t.Errorf("content %q, want %q", rep.Content, tc.content)
			}
			switch {
			case tc.callName == "" && len(rep.ToolCalls) != 0:
				t.Errorf("tool calls %+v, want none", rep.ToolCalls)
			case tc.callName != "" && (len(rep.ToolCalls) != 1 || rep.ToolCalls[0].Name != tc.callName || rep.ToolCalls[0].Arguments != tc.args):
				t.Errorf("tool calls %+v, want one to %s with %s", rep.ToolCalls, tc.callName, tc.args)
			}
			if rep.Usage.PromptTokens == 0 || (rep.Content != "" && rep.Usage.CompletionTokens == 0) {
				t.Errorf("usage %+v: want tokens counted", rep.Usage)
			}
			if again := reply(req); again.Content != rep.Content || len(again.ToolCalls) != len(rep.ToolCalls) {
				t.Errorf("the same request answered %+v, then %+v", rep, again)
			}
		})
	}
}
