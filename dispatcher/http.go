package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTP runner defaults.
const (
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20 // 1 MiB
)

// HTTPConfig configures the http runner.
type HTTPConfig struct {
	// Client sends the requests; when nil, a client whose transport keeps
	// MaxIdleConnsPerHost idle connections per upstream. The runner applies its own
	// per-call timeout through the request context.
	Client *http.Client
	// MaxIdleConnsPerHost sizes the default client's idle pool per upstream host,
	// so that as many workers as call one API at once reuse their connections
	// (net/http keeps 2); DefaultWorkers() when 0. Ignored when Client is set.
	MaxIdleConnsPerHost int
	// Env resolves the environment variables the auth column names; required
	// (os.LookupEnv in production).
	Env Env
	// Timeout bounds one call, response body included; DefaultHTTPTimeout when 0.
	Timeout time.Duration
	// MaxResponseBytes caps the upstream body; DefaultMaxResponseBytes when 0. A
	// larger body fails the call with ERR:http:response_too_large:<cap>.
	MaxResponseBytes int64
	// TagSalt keys Outcome.CredTag (see Credential.Tag). Use a per-deployment
	// secret so tags cannot be compared across deployments.
	TagSalt string
}

func (c *HTTPConfig) setDefaults() {
	if c.MaxIdleConnsPerHost == 0 {
		c.MaxIdleConnsPerHost = DefaultWorkers()
	}
	if c.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = c.MaxIdleConnsPerHost
		t.MaxIdleConns = max(t.MaxIdleConns, c.MaxIdleConnsPerHost)
		c.Client = &http.Client{Transport: t}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultHTTPTimeout
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
}

// Validate reports every problem with c, joined.
func (c HTTPConfig) Validate() error {
	var errs []error
	if c.Env == nil {
		errs = append(errs, errors.New("dispatcher: HTTPConfig.Env is required"))
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("dispatcher: HTTPConfig.Timeout must not be negative"))
	}
	if c.MaxIdleConnsPerHost < 0 {
		errs = append(errs, errors.New("dispatcher: HTTPConfig.MaxIdleConnsPerHost must not be negative"))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, errors.New("dispatcher: HTTPConfig.MaxResponseBytes must not be negative"))
	}
	return errors.Join(errs...)
}

// HTTPRunner runs http rows. target is "METHOD url" (a bare url means GET),
// substituted in URL mode; the body is the content's executable lines substituted in
// JSON mode, and no body when content has none. A body that parses as JSON is sent
// as application/json, any other as text/plain. The auth column is applied last.
//
// Results: "HTTP <status>:<body>" for 1xx-3xx; ERR:http:<status>:<body> for 4xx/5xx;
// ERR:http:fetch:<message> for DNS, TLS or connection failures;
// ERR:http:timeout:<duration>; ERR:http:response_too_large:<cap>;
// ERR:http:canceled:<reason> when the caller's context ends;
// ERR:http:bad_target:<reason>; ERR:http:<KEY>:ERR:auth:... for a bad auth column.
// Every applied secret value (and its wire encodings) is replaced by REDACTED in
// every result, including upstream bodies that echo it.
type HTTPRunner struct {
	cfg HTTPConfig
}

// NewHTTPRunner validates cfg and returns the runner.
func NewHTTPRunner(cfg HTTPConfig) (*HTTPRunner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &HTTPRunner{cfg: cfg}, nil
}

// Build renders the outbound request of c and applies its credential, without
// sending anything. The request holds secret values; never show it unredacted.
func (r *HTTPRunner) Build(c Call) (*OutboundRequest, Credential, error) {
	args := c.args()
	method, rawURL, err := splitTarget(Substitute(c.Row.Target, args, c.Vars, ModeURL))
	if err != nil {
		return nil, Credential{}, err
	}
	req := &OutboundRequest{Method: method, URL: rawURL, Headers: map[string]string{}}
	if tmpl := template(c.Row.Content); tmpl != "" {
		req.Body = Substitute(tmpl, args, c.Vars, ModeJSON)
	}
	if req.Body != "" {
		ct := "text/plain; charset=utf-8"
		if json.Valid([]byte(req.Body)) {
			ct = "application/json"
		}
		req.SetHeader("content-type", ct)
	}
	cred, err := ApplyAuth(c.Row.Auth, r.cfg.Env, req)
	if err != nil {
		return nil, Credential{}, errHTTPAuth(c.Row.Key, err)
	}
	return req, cred, nil
}

// Run implements Runner.
func (r *HTTPRunner) Run(ctx context.Context, c Call) Outcome {
	req, cred, err := r.Build(c)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return Outcome{Result: e.Text, Err: err}
		}
		return Outcome{Result: "ERR:http:" + err.Error(), Err: err}
	}
	rd := newRedactor(cred.Secrets())
	tag := cred.Tag(r.cfg.TagSalt)
	if c.Shape {
		o := shaped(rd.value(req.shape()).(map[string]any))
		o.CredTag = tag
		return o
	}
	o := r.send(ctx, req, rd)
	o.CredTag = tag
	return o
}

// send performs the request; every text it returns is scrubbed by rd.
func (r *HTTPRunner) send(ctx context.Context, req *OutboundRequest, rd redactor) Outcome {
	if err := ctx.Err(); err != nil {
		return failed(errCanceled(RunnerHTTP, err))
	}
	tctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(tctx, req.Method, req.URL, body)
	if err != nil {
		return failed(errHTTPBadTarget(rd.scrub(unwrapURLError(err))))
	}
	for k, v := range req.Headers {
		if strings.EqualFold(k, "host") {
			hreq.Host = v
			continue
		}
		hreq.Header.Set(k, v)
	}
	resp, err := r.cfg.Client.Do(hreq)
	if err != nil {
		return r.transportFailure(ctx, err, rd)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.cfg.MaxResponseBytes+1))
	if err != nil {
		o := r.transportFailure(ctx, err, rd)
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	if int64(len(data)) > r.cfg.MaxResponseBytes {
		o := failed(errHTTPResponseTooLarge(r.cfg.MaxResponseBytes))
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	text := rd.scrub(string(data))
	if resp.StatusCode >= 400 {
		o := failed(errHTTPStatus(resp.StatusCode, text))
		o.Ran, o.Upstream = true, resp.StatusCode
		return o
	}
	return Outcome{Result: "HTTP " + strconv.Itoa(resp.StatusCode) + ":" + text, Ran: true, Upstream: resp.StatusCode}
}

// transportFailure classifies a failed exchange: the caller's cancellation, the
// runner's timeout, or a fetch failure.
func (r *HTTPRunner) transportFailure(ctx context.Context, err error, rd redactor) Outcome {
	if cerr := ctx.Err(); cerr != nil {
		return failed(errCanceled(RunnerHTTP, cerr))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		d := r.cfg.Timeout
		if ct := r.cfg.Client.Timeout; ct > 0 && ct < d {
			d = ct
		}
		return failed(errHTTPTimeout(d))
	}
	return failed(errHTTPFetch(rd.scrub(unwrapURLError(err))))
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

// splitTarget reads "METHOD url" after substitution; a target without a method is a
// GET. It is more lenient than contract.ParseHTTPTarget, which the directory applies
// to http rows on write: a row of another type given the http runner (the runner
// column) reaches here unvalidated.
func splitTarget(t string) (method, rawURL string, err error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return "", "", errHTTPBadTarget("empty")
	}
	method, rawURL, ok := strings.Cut(t, " ")
	if !ok {
		method, rawURL = http.MethodGet, t
	}
	method, rawURL = strings.ToUpper(strings.TrimSpace(method)), strings.TrimSpace(rawURL)
	u, perr := url.Parse(rawURL)
	switch {
	case perr != nil:
		return "", "", errHTTPBadTarget(unwrapURLError(perr))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", errHTTPBadTarget("scheme must be http or https: " + rawURL)
	case u.Host == "":
		return "", "", errHTTPBadTarget("missing host: " + rawURL)
	}
	return method, rawURL, nil
}
