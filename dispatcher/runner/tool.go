package runner

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/capdir/capdir/contract"
)

// ToolOf is row as a tool offered to a model, for an Invoker's Tools:
//
//   - Key is the row key, the tool's name;
//   - Description is the row's description (contract.Row.Description: the
//     docstring's WHAT, else its first line), then "When to use: " and its
//     WHEN_TO_USE line when it has one;
//   - Parameters is the row's input_schema when that is a JSON Schema of
//     "type":"object" (Schema is then true and the model's arguments are the
//     body), else ArgsParameters of the docstring's ARGS line.
func ToolOf(row *contract.Row) Tool {
	doc := contract.ParseDoc(row.Content)
	desc := contract.Description(row)
	if doc.WhenToUse != "" {
		if desc != "" {
			desc += "\n"
		}
		desc += "When to use: " + doc.WhenToUse
	}
	if schema, ok := objectSchema(row.InputSchema); ok {
		return Tool{Key: row.Key, Description: desc, Parameters: schema, Schema: true}
	}
	return Tool{Key: row.Key, Description: desc, Parameters: ArgsParameters(doc.Args)}
}

// objectSchema returns s compacted when it is a JSON object schema of type object.
func objectSchema(s string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || string(m["type"]) != `"object"` {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// ArgsParameters is the parameters of a row taking its arguments as the single
// string "args": {"type":"object","properties":{"args":{"type":"string",
// "description":...}}}, the description saying the arguments are one string
// separated by '|' and quoting argsDoc (the docstring's ARGS line) when given.
func ArgsParameters(argsDoc string) json.RawMessage {
	d := "the arguments as one string, separated by |"
	if argsDoc != "" {
		d += " (" + argsDoc + ")"
	}
	b, _ := json.Marshal(map[string]any{
		"type":       "object",
		"properties": map[string]any{"args": map[string]any{"type": "string", "description": d}},
	})
	return b
}

// ToolBody turns a tool call's arguments (a model's, or an MCP client's) into
// what the row is invoked with: for a tool with its own schema, the arguments
// object itself (Input.Args, compact JSON), which the gate checks against
// the row's input_schema and runs as its pipe form, as POST /api/dispatch does
// with an object body; otherwise the pipe body in "args" ("" when absent).
// reason is non-empty when they cannot be read.
func ToolBody(t Tool, args string) (in Input, reason string) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
		return in, "the arguments must be a JSON object"
	}
	if t.Schema {
		var buf bytes.Buffer
		json.Compact(&buf, []byte(args)) // valid: it just decoded
		in.Args = buf.Bytes()
		return in, ""
	}
	raw, ok := m["args"]
	if !ok || string(raw) == "null" {
		return in, ""
	}
	if err := json.Unmarshal(raw, &in.Body); err != nil {
		return Input{}, `"args" must be a string`
	}
	return in, ""
}
