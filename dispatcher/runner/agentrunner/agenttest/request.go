package agenttest

import (
	"encoding/json"
	"net/http"
)

// Request is one request the server received.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte // as received
	// Chat is Body decoded; its zero value when Body is not a chat completion
	// request (DecodeErr says why).
	Chat ChatRequest

	decodeErr error
}

// DecodeErr is why Body did not decode as a chat completion request, or nil.
func (r Request) DecodeErr() error { return r.decodeErr }

// ChatRequest is the body of a chat completion request.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
}

// Message is one message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is the message text; "" for null.
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
}

// Tool is one tool a request offers.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// System returns the text of the request's system message, "" without one.
func (r Request) System() string {
	for _, m := range r.Chat.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// User returns the text of the request's last user message.
func (r Request) User() string {
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if m := r.Chat.Messages[i]; m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// ToolResults returns the request's tool messages: their contents by tool call id.
func (r Request) ToolResults() map[string]string {
	out := map[string]string{}
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// ToolNames returns the names of the tools the request offers, in order.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Chat.Tools))
	for i, t := range r.Chat.Tools {
		out[i] = t.Name
	}
	return out
}

// wireToolCall is a tool call as the wire has it.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON writes the wire form: {"id","type":"function","function":{"name","arguments"}}.
func (tc ToolCall) MarshalJSON() ([]byte, error) {
	var w wireToolCall
	w.ID, w.Type = tc.ID, "function"
	w.Function.Name, w.Function.Arguments = tc.Name, tc.Arguments
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form.
func (tc *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*tc = ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments}
	return nil
}

// UnmarshalJSON reads the wire form: {"type":"function","function":{...}}.
func (t *Tool) UnmarshalJSON(b []byte) error {
	var w struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Tool{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	return nil
}
