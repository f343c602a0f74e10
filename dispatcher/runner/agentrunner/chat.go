package agentrunner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// The OpenAI chat completion wire format, as much of it as the runner speaks.

type chatRequest struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Tools    []toolDef `json:"tools,omitempty"`
}

type message struct {
	Role string `json:"role"`
	// Content is null on an assistant message that only calls tools.
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

func text(role, s string) message { return message{Role: role, Content: &s} }

type toolDef struct {
	Type     string      `json:"type"` // "function"
	Function functionDef `json:"function"`
}

type functionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name string `json:"name"`
	// Arguments is a JSON object as a string; some servers send the object itself,
	// which UnmarshalJSON accepts too.
	Arguments flexString `json:"arguments"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content   flexContent `json:"content"`
			ToolCalls []toolCall  `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// flexString is a JSON string, or any other JSON value kept as its text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	*f = flexString(b)
	return nil
}

func (f flexString) MarshalJSON() ([]byte, error) { return json.Marshal(string(f)) }

// flexContent is a message content: a string, null, or an array of parts whose
// "text" fields are joined.
type flexContent string

func (f *flexContent) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*f = flexContent(*s)
		}
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("message content is neither a string nor an array of parts")
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	*f = flexContent(sb.String())
	return nil
}

// exchange is one model request's result: the decoded response, or a failure.
type exchange struct {
	resp   *chatResponse
	status int // 0 when no response came
	fail   *failure.Error
}

// post sends req (built, credential applied) and decodes the answer. Every text it
// returns is scrubbed by rd.
func (r *Runner) post(ctx context.Context, req *runner.OutboundRequest, rd runner.Redactor) exchange {
	if err := ctx.Err(); err != nil {
		return exchange{fail: runner.Canceled(RunnerAgent, err)}
	}
	ctx, sp := tracing.Child(ctx, tracing.SpanUpstream, trace.SpanKindClient)
	defer sp.End()
	tctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(tctx, req.Method, req.URL, strings.NewReader(req.Body))
	if err != nil {
		return exchange{fail: errFetch(rd.Scrub(unwrapURLError(err)))}
	}
	for k, v := range req.Headers {
		hreq.Header.Set(k, v)
	}
	tracing.Inject(tctx, hreq.Header) // the model request's span, when tracing
	resp, err := r.client.Do(hreq)
	if err != nil {
		return exchange{fail: r.transportFailure(ctx, err, rd)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.cfg.MaxResponseBytes+1))
	if err != nil {
		return exchange{status: resp.StatusCode, fail: r.transportFailure(ctx, err, rd)}
	}
	if int64(len(data)) > r.cfg.MaxResponseBytes {
		return exchange{status: resp.StatusCode, fail: errResponseTooLarge(r.cfg.MaxResponseBytes)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body := rd.Scrub(string(data))
		if int64(len(body)) > r.cfg.MaxResultBytes {
			body = bodyNotShown(len(body), r.cfg.MaxResultBytes)
		}
		return exchange{status: resp.StatusCode, fail: errStatus(resp.StatusCode, body)}
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return exchange{status: resp.StatusCode, fail: errBadResponse("not a chat completion: " + rd.Scrub(err.Error()))}
	}
	if len(cr.Choices) == 0 {
		return exchange{status: resp.StatusCode, fail: errBadResponse("no choices")}
	}
	return exchange{resp: &cr, status: resp.StatusCode}
}

// transportFailure classifies a failed exchange: the caller's cancellation, the
// runner's timeout, or a fetch failure.
func (r *Runner) transportFailure(ctx context.Context, err error, rd runner.Redactor) *failure.Error {
	if cerr := ctx.Err(); cerr != nil {
		return runner.Canceled(RunnerAgent, cerr)
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return errTimeout(r.cfg.Timeout)
	}
	return errFetch(rd.Scrub(unwrapURLError(err)))
}

// unwrapURLError drops the "Post \"url\": " wrapper so the URL (which may carry a
// query credential) is not repeated in the message.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
