package mcprunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// DefaultTimeout bounds one call of the mcp runner, connecting included.
const DefaultTimeout = runner.DefaultTimeout

// Config configures the mcp runner.
type Config struct {
	// Upstreams finds a row's upstream by name; required.
	Upstreams Upstreams
	// Env resolves the environment variables an upstream's Auth names; required
	// (a SecretEnv guard over os.LookupEnv in production).
	Env runner.Env
	// Transport carries the HTTP requests to streamable HTTP upstreams;
	// http.DefaultTransport when nil.
	Transport http.RoundTripper
	// Limits bound a call: Timeout connecting and the tools/call together
	// (DefaultTimeout when 0), MaxResultBytes the result text
	// (ERR:mcp:result_too_large:<cap>), MaxSubstitutionBytes the arguments a row's
	// content template renders.
	runner.Limits
	// TagSalt keys runner.Outcome.CredTag (see runner.Credential.Tag).
	TagSalt string
	// Connected, when set, is called with an upstream's name each time a session
	// to it is made: first use and every reconnect. It must not block.
	Connected func(upstream string)
	// ListChanged, when set, is called with an upstream's name when it sends
	// notifications/tools/list_changed. It must not block.
	ListChanged func(upstream string)
}

func (c *Config) setDefaults() { c.Limits = c.Limits.WithDefaults(DefaultTimeout) }

func (c *Config) transport() http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Upstreams == nil {
		errs = append(errs, errors.New("mcprunner: Config.Upstreams is required"))
	}
	if c.Env == nil {
		errs = append(errs, errors.New("mcprunner: Config.Env is required"))
	}
	return errors.Join(append(errs, c.Limits.Validate("mcprunner"))...)
}

// Runner runs rows whose runner is "mcp". target is "<upstream>/<tool>", used
// literally (arguments cannot redirect a call). The tool's arguments are the
// body when it is a JSON object (rows with an input_schema take one), the
// content's executable lines substituted in JSON mode when the row has any (they
// must render an object), and {"args":"<body>"} otherwise.
//
// The result is the tool's structuredContent as JSON when it has one, else its
// content: text items as they are, other items as JSON, one per line. Any value
// of the upstream's credential the tool echoes, in its result or in a JSON-RPC
// error (ERR:mcp:<server>:protocol:…, ERR:mcp:<server>:unreachable:…), is
// replaced with REDACTED. The row's own auth column is not applied: an
// upstream's credential is part of its registration.
//
// Failures: ERR:mcp:bad_target:<target>, ERR:mcp:unknown_upstream:<name>,
// ERR:mcp:bad_arguments:<reason>, ERR:mcp:<server>:unreachable:<reason>,
// ERR:mcp:<server>:timeout:<tool>, ERR:mcp:<server>:tool_error:<text>,
// ERR:mcp:<server>:protocol:<message>, ERR:mcp:canceled:<reason>,
// ERR:mcp:result_too_large:<cap>, ERR:substitution_too_large:<limit>, and the
// ERR:auth:... literals of the upstream's Auth.
type Runner struct {
	cfg  Config
	pool *pool
}

// New validates cfg and returns the runner. Stop closes its sessions.
func New(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg}
	r.pool = &pool{cfg: &r.cfg, sessions: map[string]*session{}}
	return r, nil
}

// Stop closes every upstream session; calls after it fail as unreachable. It is
// idempotent.
func (r *Runner) Stop() { r.pool.close() }

// Run implements runner.Runner.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	name, tool, ok := SplitTarget(c.Row.Target)
	if !ok {
		return runner.Failed(errBadTarget(c.Row.Target))
	}
	u, ok := r.cfg.Upstreams.Upstream(name)
	if !ok {
		return runner.Failed(errUnknownUpstream(name))
	}
	args, err := r.arguments(c)
	if err != nil {
		return runner.FailedWith(err)
	}
	if c.Shape {
		shape := map[string]any{"shape": true, "upstream": name, "tool": tool, "arguments": args}
		return runner.Shaped(runner.RedactDeep(shape, nil).(map[string]any))
	}
	if err := ctx.Err(); err != nil {
		return runner.Failed(runner.Canceled(RunnerMCP, err))
	}
	tctx, cancel := r.cfg.Bound(ctx)
	defer cancel()
	var res *mcp.CallToolResult
	s, connected, err := r.callOnce(ctx, tctx, u, func(ctx context.Context, s conn) (err error) {
		ctx, sp := tracing.Child(ctx, tracing.SpanUpstream, trace.SpanKindClient)
		sp.Str(tracing.AttrUpstream, name)
		res, err = s.cs.CallTool(ctx, callParams(ctx, tool, args))
		sp.End()
		return err
	})
	if connected {
		defer s.release()
	}
	if err != nil {
		return r.failure(ctx, tctx, name, tool, err, connected, s.redact)
	}
	return r.outcome(name, s, res)
}

// arguments are the tool's arguments for c (see Runner).
func (r *Runner) arguments(c runner.Call) (map[string]any, error) {
	text := strings.TrimSpace(c.Body)
	if tmpl := runner.Template(c.Row.Content); tmpl != "" {
		var err error
		if text, err = runner.Substitute(tmpl, c.Arguments(), c.Vars, runner.ModeJSON, r.cfg.MaxSubstitutionBytes); err != nil {
			return nil, err
		}
	} else if !strings.HasPrefix(text, "{") {
		if args, ok := namedArguments(c.Row, c.Body); ok {
			return args, nil
		}
		if text == "" {
			return map[string]any{}, nil
		}
		return map[string]any{"args": c.Body}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(text), &args); err != nil || args == nil {
		return nil, errBadArguments("not a JSON object")
	}
	return args, nil
}

// namedArguments maps a pipe body onto the properties of the row's input_schema
// (the pipe form the gate admits a call's arguments object in: see
// contract.Signature.ObjectOf), so a tool gets its named arguments however the
// call sent them; ok is false for a row without input_schema.
func namedArguments(row *contract.Row, body string) (map[string]any, bool) {
	sig, err := contract.CompileSignature(row)
	if err != nil || sig == nil {
		return nil, false
	}
	return sig.ObjectOf(body)
}

// codeRejected is the JSON-RPC code the SDK gives a request its transport could
// not deliver: a connection failure, not an answer.
const codeRejected = -32005

// answered is the JSON-RPC error the upstream answered with, nil when err is not
// one (the connection failed).
func answered(err error) *jsonrpc.Error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && rpc.Code != codeRejected {
		return rpc
	}
	return nil
}

// failure is the Outcome of a call that got no tool result; connected says the
// session was made (an error before it is always unreachable). What the
// upstream said (a JSON-RPC error's message, an error's text) goes through
// redact, as a tool's text does: an upstream that echoes its credential there
// hands out REDACTED.
func (r *Runner) failure(ctx, tctx context.Context, name, tool string, err error, connected bool, redact runner.Redactor) runner.Outcome {
	var re *failure.Error
	rpc := answered(err)
	switch {
	case ctx.Err() != nil:
		return runner.Failed(runner.Canceled(RunnerMCP, ctx.Err()))
	case errors.As(err, &re):
		return runner.FailedWith(err)
	case connected && rpc != nil:
		o := runner.Failed(errProtocol(name, redact.Scrub(rpc.Message)))
		o.Ran = true
		return o
	case tctx.Err() != nil && connected:
		return runner.Failed(errTimeout(name, tool))
	}
	return runner.Failed(errUnreachable(name, reason(redact.Scrub(err.Error()))))
}

// reason is an error's message on one line, bounded.
func reason(msg string) string {
	s := strings.Join(strings.Fields(msg), " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// outcome maps a tool's result onto the Outcome.
func (r *Runner) outcome(name string, s conn, res *mcp.CallToolResult) runner.Outcome {
	text := s.redact.Scrub(resultText(res))
	o := runner.Outcome{Ran: true, CredTag: s.tag}
	switch {
	case int64(len(text)) > r.cfg.MaxResultBytes:
		e := runner.ResultTooLarge(RunnerMCP, r.cfg.MaxResultBytes)
		o.Result, o.Err = e.Literal, e
	case res.IsError:
		e := errToolError(name, text)
		o.Result, o.Err = e.Literal, e
	default:
		o.Result = text
	}
	return o
}

// resultText is structuredContent as JSON when there is one, else the content
// items one per line: text as it is, any other item as JSON.
func resultText(res *mcp.CallToolResult) string {
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
			continue
		}
		b, _ := json.Marshal(c)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// maxToolPages bounds the tools/list pages one listing reads.
const maxToolPages = 100

// MaxListBytes bounds one listing's tools, all its pages together, as JSON: a
// listing over it fails as ERR:mcp:<server>:unreachable:… naming it. Each page
// is bounded as one answer (MaxAnswerBytes), but maxToolPages of them would be
// held, and each sync of them written to the directory's log, kept forever.
const MaxListBytes = 16 << 20

// errListTooLarge: a listing's tools are over MaxListBytes.
var errListTooLarge = fmt.Errorf("the upstream's tools are over %d bytes; not listed further", MaxListBytes)

// Tools lists the tools of upstream name, at most max+1 of them (so a caller
// capping at max sees that there were more) and MaxListBytes of them as JSON,
// within the runner's timeout.
// Failures are the runner's literals (unknown_upstream, unreachable, timeout,
// protocol).
func (r *Runner) Tools(ctx context.Context, name string, max int) ([]*mcp.Tool, error) {
	u, ok := r.cfg.Upstreams.Upstream(name)
	if !ok {
		return nil, errUnknownUpstream(name)
	}
	tctx, cancel := r.cfg.Bound(ctx)
	defer cancel()
	var tools []*mcp.Tool
	s, connected, err := r.callOnce(ctx, tctx, u, func(ctx context.Context, s conn) error {
		tools = tools[:0]
		size := 0
		params := &mcp.ListToolsParams{}
		for page := 0; page < maxToolPages && len(tools) <= max; page++ {
			res, err := s.cs.ListTools(ctx, params)
			if err != nil {
				return err
			}
			for _, t := range res.Tools {
				if len(tools) > max {
					break
				}
				b, _ := json.Marshal(t)
				if size += len(b); size > MaxListBytes {
					return errListTooLarge
				}
				tools = append(tools, t)
			}
			if res.NextCursor == "" {
				break
			}
			params.Cursor = res.NextCursor
		}
		return nil
	})
	if connected {
		s.release()
	}
	if err != nil {
		return nil, r.failure(ctx, tctx, name, "tools/list", err, connected, s.redact).Err
	}
	return tools, nil
}
