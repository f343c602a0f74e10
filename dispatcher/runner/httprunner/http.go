package httprunner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// HTTP runner defaults (those of runner.Limits).
const (
	DefaultHTTPTimeout      = runner.DefaultTimeout
	DefaultMaxResponseBytes = runner.DefaultMaxResultBytes
)

// Config configures the http runner.
type Config struct {
	// Client sends the requests; when nil, a client whose transport keeps
	// MaxIdleConnsPerHost idle connections per upstream. The runner applies its own
	// per-call timeout through the request context. The runner sends through a copy
	// whose CheckRedirect first applies its own redirect rule (a call carrying a
	// credential stays on the row's origin) and then Client's CheckRedirect; Client
	// itself is not modified.
	Client *http.Client
	// MaxIdleConnsPerHost sizes the default client's idle pool per upstream host,
	// so that as many workers as call one API at once reuse their connections
	// (net/http keeps 2); 64 when 0. Ignored when Client is set.
	MaxIdleConnsPerHost int
	// Env resolves the environment variables the auth column names; required
	// (os.LookupEnv in production).
	Env runner.Env
	// Limits bound a call: Timeout its time, response body included
	// (DefaultHTTPTimeout when 0); MaxResultBytes the upstream body
	// (DefaultMaxResponseBytes when 0; a larger body fails the call with
	// ERR:http:response_too_large:<cap>); MaxSubstitutionBytes the rendered target
	// and the rendered body, each.
	runner.Limits
	// MaxPerOrigin bounds the calls in flight to one origin (scheme, host and
	// port of the row's target) at once; no bound when 0. A call over it waits up
	// to OriginWait for one of them to end, then fails with
	// ERR:http:origin_busy:<origin>:<max>, nothing sent: an origin that hangs
	// holds at most this many of the caller's workers until Timeout, while a
	// burst to an origin that answers is smoothed over.
	MaxPerOrigin int
	// OriginWait is how long a call over MaxPerOrigin waits for a slot:
	// DefaultOriginWait when 0, none when negative.
	OriginWait time.Duration
	// TagSalt keys runner.Outcome.CredTag (see runner.Credential.Tag). Use a per-deployment
	// secret so tags cannot be compared across deployments.
	TagSalt string
}

func (c *Config) setDefaults() {
	if c.MaxIdleConnsPerHost == 0 {
		c.MaxIdleConnsPerHost = 64
	}
	if c.OriginWait == 0 {
		c.OriginWait = DefaultOriginWait
	}
	if c.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = c.MaxIdleConnsPerHost
		t.MaxIdleConns = max(t.MaxIdleConns, c.MaxIdleConnsPerHost)
		c.Client = &http.Client{Transport: t}
	}
	c.Limits = c.Limits.WithDefaults(DefaultHTTPTimeout)
}

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Env == nil {
		errs = append(errs, errors.New("httprunner: Config.Env is required"))
	}
	if c.MaxPerOrigin < 0 {
		errs = append(errs, errors.New("httprunner: Config.MaxPerOrigin must not be negative (0 means no bound)"))
	}
	if c.MaxIdleConnsPerHost < 0 {
		errs = append(errs, errors.New("httprunner: Config.MaxIdleConnsPerHost must not be negative"))
	}
	return errors.Join(append(errs, c.Limits.Validate("httprunner"))...)
}

// Runner runs http rows. target is "METHOD url" (a bare url means GET),
// substituted in URL mode; the body is the content's executable lines substituted in
// JSON mode, and no body when content has none. A body that parses as JSON is sent
// as application/json, any other as text/plain. The auth column is applied last.
//
// Redirects: a call that carries a credential follows a redirect only within the
// row's origin (scheme, host, port), keeping its headers but sending no Referer; a
// redirect to any other origin is not followed and fails the call with
// ERR:http:redirect_off_origin:<location without query>. A call without a
// credential follows redirects as net/http does (at most ten).
//
// Results: "HTTP <status>:<body>" for 1xx-3xx; ERR:http:<status>:<body> for 4xx/5xx;
// ERR:http:fetch:<message> for DNS, TLS or connection failures;
// ERR:http:timeout:<duration>; ERR:http:response_too_large:<cap>;
// ERR:http:origin_busy:<origin>:<max> when Config.MaxPerOrigin calls to the
// target's origin stayed in flight for Config.OriginWait (nothing is sent);
// ERR:http:canceled:<reason> when the caller's context ends;
// ERR:http:bad_target:<reason>; ERR:http:<KEY>:ERR:auth:... for a bad auth column;
// ERR:http:origin_changed:<want>!=<got> when a row with auth would send its call
// anywhere but the literal origin of its target (nothing is sent; see sameOrigin);
// ERR:substitution_too_large:<limit> when the target or the body renders too large.
// Every applied secret value (and its wire encodings) is replaced by REDACTED in
// every result, including upstream bodies that echo it.
type Runner struct {
	cfg     Config
	origins *origins
}

// New validates cfg and returns the runner.
func New(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, origins: &origins{max: cfg.MaxPerOrigin, wait: cfg.OriginWait}}, nil
}

// Build renders the outbound request of c and applies its credential, without
// sending anything. The request holds secret values; never show it unredacted.
func (r *Runner) Build(c runner.Call) (*runner.OutboundRequest, runner.Credential, error) {
	args, limit := c.Arguments(), r.cfg.MaxSubstitutionBytes
	target, err := runner.Substitute(c.Row.Target, args, c.Vars, runner.ModeURL, limit)
	if err != nil {
		return nil, runner.Credential{}, err
	}
	method, rawURL, err := splitTarget(target)
	if err != nil {
		return nil, runner.Credential{}, err
	}
	req := &runner.OutboundRequest{Method: method, URL: rawURL, Headers: map[string]string{}}
	if tmpl := runner.Template(c.Row.Content); tmpl != "" {
		if req.Body, err = runner.Substitute(tmpl, args, c.Vars, runner.ModeJSON, limit); err != nil {
			return nil, runner.Credential{}, err
		}
	}
	if req.Body != "" {
		ct := "text/plain; charset=utf-8"
		if json.Valid([]byte(req.Body)) {
			ct = "application/json"
		}
		req.SetHeader("content-type", ct)
	}
	cred, err := runner.ApplyAuth(c.Row.Auth, r.cfg.Env, req)
	if err != nil {
		return nil, runner.Credential{}, errAuth(c.Row.Key, err)
	}
	if strings.TrimSpace(c.Row.Auth) != "" {
		if err := sameOrigin(c.Row.Target, req.URL, cred); err != nil {
			return nil, runner.Credential{}, err
		}
	}
	return req, cred, nil
}

// sameOrigin refuses a credentialed call whose final URL rawURL (the one sent) is
// not on the literal origin of the row's target template (contract.TemplateOrigin):
// ERR:http:origin_changed:<want>!=<got>, nothing sent. A template whose origin has
// a slot (a row stored before the directory refused them) has no literal origin,
// and every call of it is refused.
func sameOrigin(target, rawURL string, cred runner.Credential) *failure.Error {
	_, tmpl := contract.CutHTTPTarget(target)
	want, werr := contract.TemplateOrigin(tmpl)
	got := "?"
	if u, err := url.Parse(rawURL); err == nil {
		got = contract.URLOrigin(u)
	}
	if werr == nil && want == got {
		return nil
	}
	if werr != nil {
		want = werr.Error()
	}
	rd := runner.NewRedactor(cred.Secrets())
	return errOriginChanged(rd.Scrub(want), rd.Scrub(got))
}

// Run implements Runner.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	req, cred, err := r.Build(c)
	if err != nil {
		var e *failure.Error
		if errors.As(err, &e) {
			return runner.Outcome{Result: e.Literal, Err: err}
		}
		return runner.Failed(errOther(err))
	}
	rd := runner.NewRedactor(cred.Secrets())
	tag := cred.Tag(r.cfg.TagSalt)
	if c.Shape {
		o := runner.Shaped(rd.Value(req.Shape()).(map[string]any))
		o.CredTag = tag
		return o
	}
	o := r.send(ctx, req, rd, cred.Applied())
	o.CredTag = tag
	return o
}

// send performs the request; every text it returns is scrubbed by rd. credentialed
// says the request carries a secret, which restricts the redirects it follows.
func (r *Runner) send(ctx context.Context, req *runner.OutboundRequest, rd runner.Redactor, credentialed bool) runner.Outcome {
	if err := ctx.Err(); err != nil {
		return runner.Failed(runner.Canceled(runner.RunnerHTTP, err))
	}
	ctx, sp := tracing.Child(ctx, tracing.SpanUpstream, trace.SpanKindClient)
	defer sp.End()
	tctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(req.Body)
	}
	// Whether the request left whole decides Ran for a call that fails after: an
	// upstream that timed out or dropped the connection may have acted on it.
	var wrote atomic.Bool
	tctx = httptrace.WithClientTrace(tctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}})
	hreq, err := http.NewRequestWithContext(tctx, req.Method, req.URL, body)
	if err != nil {
		return runner.Failed(errBadTarget(rd.Scrub(unwrapURLError(err))))
	}
	origin := contract.URLOrigin(hreq.URL) // the bound counts calls by origin
	if !r.origins.acquire(tctx, origin) {
		if tctx.Err() != nil { // the caller gave up, or the call's time ran out, while it waited
			return r.transportFailure(ctx, tctx.Err(), rd)
		}
		return runner.Failed(errOriginBusy(rd.Scrub(origin), r.cfg.MaxPerOrigin))
	}
	defer r.origins.release(origin)
	for k, v := range req.Headers {
		if strings.EqualFold(k, "host") {
			hreq.Host = v
			continue
		}
		hreq.Header.Set(k, v)
	}
	sp.Str(tracing.AttrUpstream, origin)
	tracing.Inject(tctx, hreq.Header) // the upstream span's traceparent, when tracing
	client := *r.cfg.Client
	client.CheckRedirect = redirectPolicy(credentialed, rd, r.cfg.Client.CheckRedirect)
	resp, err := client.Do(hreq)
	var refused *failure.Error // the redirect policy's refusal; resp is the 3xx, closed
	if errors.As(err, &refused) && resp != nil {
		o := runner.Failed(refused)
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	if err != nil {
		o := r.transportFailure(ctx, err, rd)
		o.Ran = wrote.Load()
		return o
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.cfg.MaxResultBytes+1))
	if err != nil {
		o := r.transportFailure(ctx, err, rd)
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	if int64(len(data)) > r.cfg.MaxResultBytes {
		o := runner.Failed(errResponseTooLarge(r.cfg.MaxResultBytes))
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	text := rd.Scrub(string(data))
	if resp.StatusCode >= 400 {
		o := runner.Failed(errStatus(resp.StatusCode, text))
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	return runner.Outcome{Result: "HTTP " + strconv.Itoa(resp.StatusCode) + ":" + text, Ran: true, Upstream: resp.StatusCode}
}

// transportFailure classifies a failed exchange: the caller's cancellation, the
// runner's timeout, or a fetch failure.
func (r *Runner) transportFailure(ctx context.Context, err error, rd runner.Redactor) runner.Outcome {
	if cerr := ctx.Err(); cerr != nil {
		return runner.Failed(runner.Canceled(runner.RunnerHTTP, cerr))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		d := r.cfg.Timeout
		if ct := r.cfg.Client.Timeout; ct > 0 && ct < d {
			d = ct
		}
		return runner.Failed(errTimeout(d))
	}
	return runner.Failed(errFetch(rd.Scrub(unwrapURLError(err))))
}

// unwrapURLError drops the "Get \"url\": " wrapper so the URL (which may carry a
// query credential) is not repeated in the message.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// splitTarget reads "METHOD url" after substitution (contract.CutHTTPTarget); a
// target without a method is a GET. It is more lenient than
// contract.ParseHTTPTarget, which the directory applies to http rows on write: a
// row of another type given the http runner (the runner column) reaches here
// unvalidated.
func splitTarget(t string) (method, rawURL string, err error) {
	if strings.TrimSpace(t) == "" {
		return "", "", errBadTarget("empty")
	}
	method, rawURL = contract.CutHTTPTarget(t)
	u, perr := url.Parse(rawURL)
	switch {
	case perr != nil:
		return "", "", errBadTarget(unwrapURLError(perr))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", errBadTarget("scheme must be http or https: " + rawURL)
	case u.Host == "":
		return "", "", errBadTarget("missing host: " + rawURL)
	}
	return method, rawURL, nil
}
