package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector/ask"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Dispatcher is what the facade needs from the dispatch service. Implementations
// must be safe for concurrent use; Invoke blocks until the receipt or ctx.
type Dispatcher interface {
	// Invoke appends the request and waits for its receipt. When ctx ends first it
	// returns the request (with its invocation id) and ctx's error.
	Invoke(ctx context.Context, req wire.InvocationRequest) (wire.Receipt, error)
	// InvokeWait is Invoke waiting at most wait for the receipt (ctx still ends
	// the wait early): the entry points' bounded wait, without a context per call.
	InvokeWait(ctx context.Context, req wire.InvocationRequest, wait time.Duration) (wire.Receipt, error)
	// InvokeOnce is Invoke for a request sent with an Idempotency-Key: however
	// often it is sent, it runs once and every copy gets the same receipt.
	InvokeOnce(ctx context.Context, req wire.InvocationRequest, idem dispatcher.Idempotency) (wire.Receipt, error)
	// Await waits for the receipt of invocation inv, made by any caller; when ctx
	// ends first it returns the id and an error matching dispatcher.ErrPending (see
	// dispatcher.Service.Await).
	Await(ctx context.Context, inv string) (wire.Receipt, error)
	// MayRead checks that the holder of the capability token raw may have rc, a
	// receipt of a call its subject made, now (see dispatcher.Service.MayRead):
	// nil, or a *dispatcher.RefusedError.
	MayRead(ctx context.Context, raw string, rc *wire.Receipt) error
	// BreakerDecision is the gate's decision for a breaker state now for caller
	// ("" for the owner, whose answer is the row's), including whether the
	// credential the row names has been replaced since it tripped.
	BreakerDecision(st breaker.State, caller string) breaker.Decision
	// Caller checks who presents a capability token, as the gate will (see
	// gate.Gate.Caller): the token's claims, or the refusal its receipt would carry.
	Caller(raw string) (*token.Claims, *gate.Refusal)
}

// Server is the HTTP facade.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	cmd     *command.Side
	dir     *command.Directory // cmd's
	handler http.Handler
	imports chan struct{} // one token per import running; capacity Config.MaxImports
	ask     *ask.Index    // the rows for GET /api/dispatch?ask= (ask.go)
}

// New builds the facade and its routes.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cmd, err := command.New(cfg.commands())
	if err != nil {
		return nil, err
	}
	if cfg.OwnerKey == nil {
		if cfg.OwnerKey, err = ownerkey.New(ownerkey.Config{Key: cfg.TerminalKey, Clock: cfg.Clock, Logger: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), cmd: cmd, dir: cmd.Directory(), imports: make(chan struct{}, cfg.MaxImports)}
	s.ask = cfg.Ask
	if s.ask == nil {
		if s.ask, err = NewAskIndex(cfg.Projector); err != nil {
			return nil, err
		}
	}
	s.routes()
	if cfg.Console != nil {
		h, err := cfg.Console(s)
		if err != nil {
			return nil, err
		}
		s.mux.Handle("/console/", h)
		s.mux.Handle("/console", h)
	}
	s.handler = guardBody(guardHost(http.HandlerFunc(s.serveHTTP), publicURLHost(cfg.PublicURL)))
	return s, nil
}

// Handler is the facade's http.Handler. A request no route serves gets JSON too:
// 404 {"error":"not_found","path":…}, or 405 {"error":"method_not_allowed",
// "allow":"GET, HEAD"} with an Allow header when the path has routes for other
// methods; a path that is not clean is redirected to its clean form
// (cleanLocation). A request whose body its handler left unread does not hold
// the connection (see guardBody). A request that reached a loopback address
// under a Host that is not loopback nor the public URL's is answered 403 before
// any route (see guardHost).
func (s *Server) Handler() http.Handler { return s.handler }

// Commands is the command side this facade calls for every change: the directory's
// write path, tokens and approvals, with the same validation, optimistic
// concurrency and read-your-writes for any other entry point.
func (s *Server) Commands() *command.Side { return s.cmd }

// Directory is the directory's write path this facade uses (Commands().Directory()).
func (s *Server) Directory() *command.Directory { return s.dir }

func (s *Server) routes() {
	s.handle("GET /healthz", s.healthz)
	if s.cfg.Gatherer != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{}))
	}
	s.registerDirectory()
	s.registerHistory()
	s.registerDispatch()
	s.registerBreaker()
	s.registerTokens()
	s.registerApprovals()
	s.registerLedger()
	s.registerUpstreams()
	if s.cfg.MCP != nil {
		s.mux.Handle("/mcp", s.cfg.MCP) // the MCP server (package api/mcp), every method
	}
}

// handlerFunc is a route's handler: it writes its answer, or returns the error
// that writeErr answers (it writes nothing then).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers h for pattern; its errors are answered by writeErr. An error
// answered before the request's body was read to its end (a 401, a 413 by the
// declared length, a 429, a bad query) closes the connection after it, so the
// server neither reads the rest of the body nor waits for it (closeUnread).
func (s *Server) handle(pattern string, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			if b, ok := r.Body.(*trackedBody); ok && !b.eof {
				closeUnread(w, r)
			}
			writeErr(w, err)
		}
	})
}

// owner wraps a handler with the x-terminal-key check, made before anything of the
// request's body is read: without the owner key the handler does not run, the
// answer is ErrUnauthorized's, and the body is not waited for (see handle). A
// capability token is not the owner's key: a caller that sent one is told the
// route needs the owner key.
func (s *Server) owner(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.checkOwner(r); err != nil {
			return err
		}
		return h(w, r)
	}
}

// checkOwner is nil when r carries the owner key, else ErrUnauthorized (errOwnerOnly
// when r presented a capability token), or the throttle's refusal when r's
// address has sent too many wrong keys (see ownerKey).
func (s *Server) checkOwner(r *http.Request) error {
	err := s.ownerKey(r)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ownerkey.ErrThrottled):
		return err
	case r.Header.Get("Authorization") != "":
		return errOwnerOnly
	}
	return ErrUnauthorized
}

// ownerKey checks r's x-terminal-key through the throttle: nil for the owner key,
// ownerkey.ErrWrongKey for a wrong or missing one (a missing one is not counted),
// or a *ownerkey.ThrottledError, the key not compared.
func (s *Server) ownerKey(r *http.Request) error {
	key := r.Header.Get("x-terminal-key")
	if key == "" {
		return ownerkey.ErrWrongKey
	}
	return s.cfg.OwnerKey.Check(r, key)
}

// serveHTTP routes r; a request no route serves is answered by writeErr, as JSON.
// A path that is not clean is redirected to its clean form (cleanLocation).
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	esc := r.URL.EscapedPath()
	clean := r.Method == http.MethodConnect || cleanPath(esc) == esc
	if !clean && len(cleanPath(esc)) > maxCleanedPath {
		writeErr(w, &routeError{kind: ErrNoRoute, path: r.URL.Path})
		return
	}
	if _, pattern := s.mux.Handler(r); pattern != "" && clean {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The mux's own answer: 404, 405 with Allow, or a redirect to a clean path.
	rec := &headerRecorder{header: http.Header{}}
	s.mux.ServeHTTP(rec, r)
	switch rec.status {
	case http.StatusNotFound:
		writeErr(w, &routeError{kind: ErrNoRoute, path: r.URL.Path})
	case http.StatusMethodNotAllowed:
		writeErr(w, &routeError{kind: ErrMethodNotAllowed, path: r.URL.Path, allow: rec.header.Get("Allow")})
	default:
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		if !clean { // the mux's redirect, to the clean path as sent, without its body
			w.Header().Set("Location", cleanLocation(r))
			w.Header().Del("Content-Type")
		}
		w.WriteHeader(rec.status)
	}
}

// maxCleanedPath bounds the clean path a request is redirected to: no route's
// path is longer (keys, ids and names are short), so a request whose clean path
// is longer is answered 404 at once.
const maxCleanedPath = 2 << 10

// cleanLocation is where a request whose escaped path is not clean (a "//", a
// "." or ".." segment) is redirected: its clean path, escaped as sent, and its
// query. The mux's own redirect escaped the path's escapes again (/a//%41 went
// to /a/%2541, another path) and repeated the Location in an HTML body, which
// serveHTTP does not pass on: a path of 900 KiB sent by anyone made an answer of
// up to 9 MiB.
func cleanLocation(r *http.Request) string {
	loc := cleanPath(r.URL.EscapedPath())
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	return loc
}

// cleanPath is p as the mux cleans it: rooted, without "//", "." or ".."
// segments, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// headerRecorder keeps the status and headers a handler writes, not its body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil
}
func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

// writeJSON writes v with status; v may be a json.RawMessage or []byte of JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch b := v.(type) {
	case []byte:
		w.Write(b)
		w.Write([]byte("\n"))
	case json.RawMessage:
		w.Write(b)
		w.Write([]byte("\n"))
	default:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
	}
}
