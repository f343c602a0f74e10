package agentrunner

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// conversation is one call's exchange with its model: where it goes, with which
// credential, and the messages so far.
type conversation struct {
	model string // as the row names it: what Prices is keyed by
	req   chatRequest
	out   runner.OutboundRequest // URL and headers, credential applied; Body per request
	cred  runner.Credential
	rd    runner.Redactor
	tools toolbox
}

// start builds the first request of c: the provider route, the credential, the
// system prompt (includes first) and the offered tools. Nothing is sent.
func (r *Runner) start(ctx context.Context, c runner.Call) (*conversation, *failure.Error) {
	model := strings.TrimSpace(c.Row.Target)
	if model == "" {
		return nil, errBadModel("the target names no model")
	}
	base, sent, ok := r.cfg.Providers.Route(model)
	if !ok {
		return nil, errNoProvider(shorten(model))
	}
	if sent == "" {
		return nil, errBadModel("no model after the routing prefix of " + shorten(model))
	}
	cv := &conversation{model: model, req: chatRequest{Model: sent}}
	cv.out = runner.OutboundRequest{Method: http.MethodPost, URL: base + "/chat/completions"}
	cv.out.SetHeader("Content-Type", "application/json")
	cred, err := runner.ApplyAuth(c.Row.Auth, r.cfg.Env, &cv.out)
	if err != nil {
		return nil, errAuth(c.Row.Key, err)
	}
	cv.cred, cv.rd = cred, runner.NewRedactor(cred.Secrets())
	system, fail := systemPrompt(ctx, c)
	if fail != nil {
		return nil, fail
	}
	if cv.tools, fail = offer(ctx, c); fail != nil {
		return nil, fail
	}
	if system != "" && c.Shape && c.Restricted {
		system = promptWithheld // the row's contract document does not show it either
	}
	if system != "" {
		cv.req.Messages = append(cv.req.Messages, text("system", system))
	}
	cv.req.Messages = append(cv.req.Messages, text("user", c.Body))
	cv.req.Tools = cv.tools.defs
	return cv, nil
}

// request is the next outbound request: the conversation so far as its body.
func (cv *conversation) request() *runner.OutboundRequest {
	body, err := json.Marshal(cv.req)
	if err != nil { // only strings and valid JSON are ever put in it
		panic("agentrunner: request is not JSON: " + err.Error())
	}
	out := cv.out
	out.Body = string(body)
	return &out
}

// Run implements runner.Runner: see the package documentation.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	if err := ctx.Err(); err != nil {
		return runner.Failed(runner.Canceled(RunnerAgent, err))
	}
	cv, fail := r.start(ctx, c)
	if fail != nil {
		return runner.Failed(fail)
	}
	tag := cv.cred.Tag(r.cfg.TagSalt)
	if c.Shape {
		o := runner.Shaped(cv.rd.Value(cv.request().Shape()).(map[string]any))
		o.CredTag = tag
		return o
	}
	o := r.converse(ctx, c, cv)
	o.CredTag = tag
	o.CostUSD = r.cfg.Prices.Cost(cv.model, o.PromptTokens, o.CompletionTokens)
	return o
}

// converse runs the loop: ask the model; run the tools it calls and give it their
// results; stop at its final answer or after MaxSteps requests.
func (r *Runner) converse(ctx context.Context, c runner.Call, cv *conversation) runner.Outcome {
	var o runner.Outcome
	calls := 0
	for step := 1; ; step++ {
		req := cv.request()
		if int64(len(req.Body)) > r.cfg.MaxRequestBytes {
			return failed(o, errRequestTooLarge(r.cfg.MaxRequestBytes))
		}
		size := int64(len(req.Body))
		ex := r.post(ctx, req, cv.rd)
		if ex.status != 0 {
			o.Ran, o.Upstream = true, ex.status
		}
		if ex.fail != nil {
			return failed(o, ex.fail)
		}
		o.PromptTokens = addTokens(o.PromptTokens, ex.resp.Usage.PromptTokens)
		o.CompletionTokens = addTokens(o.CompletionTokens, ex.resp.Usage.CompletionTokens)
		msg := ex.resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			answer := cv.rd.Scrub(string(msg.Content))
			if int64(len(answer)) > r.cfg.MaxResultBytes {
				return failed(o, runner.ResultTooLarge(RunnerAgent, r.cfg.MaxResultBytes))
			}
			o.Result = answer
			return o
		}
		if step >= r.cfg.MaxSteps {
			return failed(o, errStepLimit(r.cfg.MaxSteps))
		}
		if len(msg.ToolCalls) > r.cfg.MaxToolCalls {
			return failed(o, errToolCalls(len(msg.ToolCalls), r.cfg.MaxToolCalls))
		}
		asked := message{Role: "assistant", ToolCalls: msg.ToolCalls}
		if msg.Content != "" {
			s := string(msg.Content)
			asked.Content = &s
		}
		for i := range asked.ToolCalls {
			tc := &asked.ToolCalls[i]
			tc.Type = "function"
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(calls+i+1)
			}
		}
		cv.req.Messages = append(cv.req.Messages, asked)
		for _, tc := range asked.ToolCalls {
			calls++
			content, st, fail := cv.tools.call(ctx, c, calls, tc, cv.rd)
			if fail != nil {
				return failed(o, fail)
			}
			if st != nil {
				o.Children = append(o.Children, st.InvocationID)
			}
			reply := text("tool", content)
			reply.ToolCallID = tc.ID
			cv.req.Messages = append(cv.req.Messages, reply)
			if size += int64(len(content)); size > r.cfg.MaxRequestBytes {
				return failed(o, errRequestTooLarge(r.cfg.MaxRequestBytes))
			}
		}
	}
}

// failed completes o, which keeps what ran and what it cost, as the failure e.
func failed(o runner.Outcome, e *failure.Error) runner.Outcome {
	o.Result, o.Err = e.Literal, e
	return o
}

// maxTokens bounds the tokens a call reports of either kind: far past any real
// call, and exact as a float, so that a cost computed from them stays finite.
const maxTokens = 1 << 50

// addTokens is sum plus the n tokens a model response reports, as the model
// server said them: a negative count (which would take a cost below zero) adds
// nothing, and the sum stops at maxTokens rather than overflow.
func addTokens(sum, n int64) int64 {
	if n <= 0 {
		return sum
	}
	return min(sum, maxTokens) + min(n, maxTokens-min(sum, maxTokens))
}
