// Package agenttest is a fake OpenAI-compatible model server for tests of agent
// rows: it answers POST .../chat/completions with scripted replies (final answers,
// tool calls, error statuses, raw bodies, or no answer until the client gives up)
// and records every request it received, decoded. It listens on a local httptest
// server; nothing reaches the network.
//
// It speaks the wire format itself, apart from the agent runner's code, so a test
// that passes against it checks the runner against the format, not against itself.
package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Reply is one answer of the fake model.
type Reply struct {
	// Content is the assistant message's text: the final answer when ToolCalls is
	// empty.
	Content string
	// ToolCalls are the tools the model calls; an ID left empty is filled in as
	// "call_<n>", n counting the server's tool calls from 1.
	ToolCalls []ToolCall
	// Usage is reported as the response's usage.
	Usage Usage
	// Status, when not 0, is the HTTP status; Body is then the response body as it
	// is (an error document, say), unless Body is empty.
	Status int
	// Body, when set, is sent as the response body as it is, instead of the chat
	// completion built from Content and ToolCalls (malformed JSON, say).
	Body string
	// Block holds the response until the client gives up (its request context
	// ends); nothing is answered.
	Block bool
}

// ToolCall is one tool call, in a reply or in a recorded assistant message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // a JSON object, as a string
}

// Usage is the token usage of one reply.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// Answer is a reply with a final answer.
func Answer(content string) Reply { return Reply{Content: content} }

// Call is a reply calling one tool with the given JSON arguments.
func Call(name, arguments string) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: arguments}}}
}

// Script answers with replies in order, one per request; a request past the end is
// answered 500 "agenttest: script exhausted".
func Script(replies ...Reply) func(Request) Reply {
	var mu sync.Mutex
	next := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return Reply{Status: http.StatusInternalServerError, Body: fmt.Sprintf("agenttest: script exhausted after %d replies", len(replies))}
		}
		next++
		return replies[next-1]
	}
}

// Server is a running fake model server.
type Server struct {
	// URL is the server's root: give it as a provider's base URL (requests to any
	// path ending in /chat/completions are answered).
	URL string

	srv    *httptest.Server
	handle func(Request) Reply

	mu    sync.Mutex
	reqs  []Request
	calls int
}

// NewServer starts a server answering with script, in order (Script), and closes
// it when t ends.
func NewServer(t testing.TB, script ...Reply) *Server {
	return NewServerFunc(t, Script(script...))
}

// NewServerFunc starts a server answering each request with handle's reply, and
// closes it when t ends. handle may be called concurrently.
func NewServerFunc(t testing.TB, handle func(Request) Reply) *Server {
	t.Helper()
	s := Start(handle)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server answering each request with handle's reply, on a loopback
// port of its own; Close it.
func Start(handle func(Request) Reply) *Server { return StartOn(nil, handle) }

// StartOn is Start on the caller's listener (a fixed address, for a program that
// others are told to reach), or on a loopback port of its own when l is nil. The
// server owns l from then on; Close it.
func StartOn(l net.Listener, handle func(Request) Reply) *Server {
	s := &Server{handle: handle}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if l != nil {
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Close stops the server, waiting for the requests it is answering.
func (s *Server) Close() { s.srv.Close() }

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	raw, _ := io.ReadAll(hr.Body)
	req := Request{Method: hr.Method, Path: hr.URL.Path, RawQuery: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: raw}
	req.decodeErr = json.Unmarshal(raw, &req.Chat)
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if hr.Method != http.MethodPost || !strings.HasSuffix(hr.URL.Path, "/chat/completions") {
		http.Error(w, "agenttest: only POST .../chat/completions is served", http.StatusNotFound)
		return
	}
	if req.decodeErr != nil {
		http.Error(w, "agenttest: the request is not a chat completion request: "+req.decodeErr.Error(), http.StatusBadRequest)
		return
	}
	rep := s.handle(req)
	switch {
	case rep.Block:
		<-hr.Context().Done()
		return
	case rep.Status != 0 && rep.Body != "":
		w.WriteHeader(rep.Status)
		io.WriteString(w, rep.Body)
		return
	case rep.Body != "":
		io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 {
		w.WriteHeader(rep.Status)
	}
	json.NewEncoder(w).Encode(s.completion(rep))
}

// completion is rep as a chat completion response.
func (s *Server) completion(rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		calls := make([]ToolCall, len(rep.ToolCalls))
		s.mu.Lock()
		for i, tc := range rep.ToolCalls {
			s.calls++
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d", s.calls)
			}
			calls[i] = tc
		}
		s.mu.Unlock()
		msg["tool_calls"], finish = calls, "tool_calls"
		if rep.Content == "" {
			msg["content"] = nil
		}
	}
	return map[string]any{
		"id": "chatcmpl-agenttest", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": rep.Usage.PromptTokens, "completion_tokens": rep.Usage.CompletionTokens,
			"total_tokens": rep.Usage.PromptTokens + rep.Usage.CompletionTokens,
		},
	}
}
