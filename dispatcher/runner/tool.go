package runner

import (
	"bytes"
	"encoding/json"

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
	desc := row.Description()
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
