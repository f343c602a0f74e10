package mcprunner

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/tracing"
)

// errClosed is what a call made after Stop gets from the pool.
var errClosed = errors.New("runner stopped")

// pool holds one client session per upstream, made on first use and retired
// when its connection fails or the upstream's registration changes. A retired
// session is closed once the last call using it has ended (see live), so no
// call meets a session closed under it.
type pool struct {
	cfg *Config

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

// session is one upstream's place in the pool. mu serialises connecting, so
// concurrent first calls make one session.
type session struct {
	mu          sync.Mutex
	fingerprint string
	cur         *live
}

// conn is a session as one call uses it: it holds a use of l until release, so
// another call may retire the session meanwhile but not close it.
type conn struct {
	l      *live
	cs     *mcp.ClientSession
	redact runner.Redactor
	tag    string
	// tracked says that sent reports whether a call's request was handed to the
	// upstream's transport (HTTP upstreams; see sentMark).
	tracked bool
}

// release ends the call's use of its session.
func (c conn) release() { c.l.release() }

func (p *pool) entry(name string) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	s := p.sessions[name]
	if s == nil {
		s = &session{}
		p.sessions[name] = s
	}
	return s, nil
}

// get returns a connected session for u, connecting within ctx when there is
// none (or the one there is was made for another registration of u). The
// caller releases it when its call has ended. When connecting fails, the conn
// returned holds only the redactor of u's credential, for the failure.
func (p *pool) get(ctx context.Context, u Upstream) (conn, error) {
	s, err := p.entry(u.Name)
	if err != nil {
		return conn{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.fingerprint == u.fingerprint() && s.cur.acquire() {
		return s.cur.conn(), nil
	}
	if s.cur != nil {
		s.cur.retire()
		s.cur = nil
	}
	t, cred, err := p.transport(u)
	if err != nil {
		return conn{}, err
	}
	cs, err := p.client(u.Name).Connect(ctx, t, nil)
	if err != nil {
		return conn{redact: runner.NewRedactor(cred.Secrets())}, err
	}
	l := &live{cs: cs, redact: runner.NewRedactor(cred.Secrets()), tag: cred.Tag(p.cfg.TagSalt), tracked: len(u.Command) == 0}
	if p.isClosed() { // Stop came while connecting: close it, nobody else will
		cs.Close()
		return conn{}, errClosed
	}
	s.cur, s.fingerprint = l, u.fingerprint()
	l.acquire()
	if p.cfg.Connected != nil {
		p.cfg.Connected(u.Name)
	}
	return l.conn(), nil
}

func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// client is an SDK client whose tool list changes reach Config.ListChanged.
func (p *pool) client(name string) *mcp.Client {
	var opts mcp.ClientOptions
	if f := p.cfg.ListChanged; f != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { f(name) }
	}
	return mcp.NewClient(&mcp.Implementation{Name: "capdir", Version: "1"}, &opts)
}

// transport is the SDK transport for u, with u's credential applied to every
// HTTP request.
func (p *pool) transport(u Upstream) (mcp.Transport, runner.Credential, error) {
	if len(u.Command) > 0 {
		cmd := exec.Command(u.Command[0], u.Command[1:]...)
		cmd.Env = childEnv()
		return &mcp.CommandTransport{Command: cmd}, runner.Credential{}, nil
	}
	req := &runner.OutboundRequest{Method: http.MethodPost, URL: u.URL}
	cred, err := runner.ApplyAuth(u.Auth, p.cfg.Env, req)
	if err != nil {
		return nil, cred, err
	}
	target, err := url.Parse(req.URL)
	if err != nil {
		return nil, cred, err
	}
	hc := &http.Client{Transport: headerTransport{base: p.cfg.transport(), headers: req.Headers, origin: runner.Origin(target)},
		CheckRedirect: sameOriginRedirect}
	return &mcp.StreamableClientTransport{Endpoint: req.URL, HTTPClient: hc, MaxRetries: -1}, cred, nil
}

// drop retires name's session if it is still l (its connection failed): the
// next call connects again, and l is closed once the calls using it have
// ended. An l another call dropped already is not there to drop.
func (p *pool) drop(name string, l *live) {
	s, err := p.entry(name)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l != nil && s.cur == l {
		s.cur.retire()
		s.cur = nil
	}
}

// close retires every session; later calls fail. A session a call still uses
// is closed when that call ends.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	sessions := p.sessions
	p.sessions = nil
	p.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		if s.cur != nil {
			s.cur.retire()
			s.cur = nil
		}
		s.mu.Unlock()
	}
}

// errRedirectOffOrigin refuses a redirect away from the upstream's origin: the
// connection fails (ERR:mcp:<server>:unreachable:...), and no request, with the
// credential or without, goes to the other origin.
var errRedirectOffOrigin = errors.New("the upstream redirected to another origin; not followed")

// sameOriginRedirect follows a redirect only within the upstream's origin,
// without a Referer, as the http runner does for a call with a credential.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if runner.Origin(req.URL) != runner.Origin(via[0].URL) {
		return errRedirectOffOrigin
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	req.Header.Del("Referer")
	return nil
}

// headerTransport sets the upstream's credential headers on every request to its
// origin, and on no other.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	markSent(r.Context())               // past here the upstream may have the request: see again
	tp := tracing.Outgoing(r.Context()) // a call's, when tracing: see trace.go
	if (len(h.headers) > 0 || tp != "") && runner.Origin(r.URL) == h.origin {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
		if tp != "" {
			tracing.Inject(r.Context(), r.Header)
		}
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxAnswerBytes}
	}
	return resp, err
}

// cappedBody fails a read past left bytes with errAnswerTooLarge: the SDK reads
// a JSON answer whole, so a huge one would be held in memory whole.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return 0, errAnswerTooLarge
	}
	return n, err
}

// MaxAnswerBytes bounds one application/json answer of an HTTP upstream, as
// the SDK bounds one event of a stream (mcp.DefaultMaxEventSize): a larger one
// fails as ERR:mcp:<server>:unreachable:… naming it.
const MaxAnswerBytes = 16 << 20
