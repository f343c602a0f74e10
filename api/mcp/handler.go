package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionHeader carries a streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

// Handler serves MCP over streamable HTTP: an http.Handler to mount at /mcp.
// Every request is authenticated first; a POST without a session id opens a
// session with a server of its own, whose tools are what that credential may
// call. Run keeps the sessions' tool lists in step with the directory; Close
// ends every session. A Handler is safe for concurrent use.
type Handler struct {
	cfg  Config
	sdk  *sdk.StreamableHTTPHandler
	base *sdk.Server // answers the SDK's per-request questions when no new session is being opened

	mu       sync.Mutex
	sessions map[string]*session // by session id, from opening to the end of the SDK's session
	closed   bool
	done     chan struct{}  // closed when the first Close returns
	wg       sync.WaitGroup // the goroutines waiting for sessions to end

	watch   sync.Once
	pendMu  sync.Mutex
	pending map[string]struct{} // keys changed since the last refresh
	kick    chan struct{}
}

// New validates cfg and builds the handler. Nothing runs until Run.
func New(cfg Config) (*Handler, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{done: make(chan struct{}),
		cfg: cfg, sessions: map[string]*session{}, pending: map[string]struct{}{}, kick: make(chan struct{}, 1),
		base: sdk.NewServer(&sdk.Implementation{Name: "capdir", Version: version()}, &sdk.ServerOptions{Logger: cfg.Logger}),
	}
	// The sessions' idle timeout is the handler's (idle.go): the SDK does not see
	// the calls the fast path answers.
	h.sdk = sdk.NewStreamableHTTPHandler(h.server, &sdk.StreamableHTTPOptions{
		MaxRequestBodyBytes: cfg.MaxBody, Logger: cfg.Logger,
	})
	return h, nil
}

// sessionKey carries the session being opened in a request's context.
type sessionKey struct{}

// server is the SDK's getServer: the server of the session the request opens, or
// the base server (which holds no tool and serves no session).
func (h *Handler) server(r *http.Request) *sdk.Server {
	if s, ok := r.Context().Value(sessionKey{}).(*session); ok {
		return s.srv
	}
	return h.base
}

// ServeHTTP authenticates the request, then serves it: a request of an open
// session under that session's credential, or a POST that opens a session
// (?mode=search for search mode).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, refused := h.authenticate(r)
	if refused != nil {
		answer(w, r, *refused)
		return
	}
	if id := r.Header.Get(sessionHeader); id != "" {
		s := h.session(id)
		if s != nil && s.caller.id != c.id {
			answer(w, r, answerSessionCredential)
			return
		}
		if r.Method == http.MethodGet {
			keepOpen(w) // the session's stream of notifications outlives the server's timeouts
		}
		if s != nil {
			h.serveSession(w, r, s) // a tools/call on the fast path (fast.go), the rest by the SDK
			return
		}
		h.sdk.ServeHTTP(w, r) // the SDK's answer to an unknown session
		return
	}
	if r.Method != http.MethodPost {
		h.sdk.ServeHTTP(w, r) // the SDK's answer: a session id is required
		return
	}
	m, ok := parseMode(r.URL.Query().Get("mode"))
	if !ok {
		answer(w, r, answerBadMode(r.URL.Query().Get("mode")))
		return
	}
	if body, whole := takeBody(r, h.cfg.MaxBody); whole {
		if msg := idRefusal(body); msg != "" {
			answerBadID(w, msg)
			return
		}
	}
	s, err := h.open(c, m)
	if errors.Is(err, ErrTooManySessions) {
		answer(w, r, answerTooManySessions(h.cfg.MaxSessions))
		return
	}
	if err != nil { // ErrClosed
		answer(w, r, answerClosed)
		return
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	h.adopt(s)
}

// keepOpen lifts the HTTP server's read and write deadlines from a session's
// stream: it lasts as long as the session (SessionIdle ends an idle one).
func keepOpen(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
}

// answer writes a refusal given before the request's body was read: the
// connection closes after it, so its body is neither read nor waited for.
func answer(w http.ResponseWriter, r *http.Request, a httpAnswer) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	if a.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="capdir"`)
	}
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(a.body)
}

// session is the open session id names, nil when there is none.
func (h *Handler) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// open makes and registers the session a request opens. Its tools are read when
// it is initialized (load): a client's probe that the SDK refuses (a protocol
// this stateful server does not speak) costs no read of the directory.
// A credential holding Config.MaxSessions sessions already has its idlest ones
// ended to make room (limit.go), or, when each is answering a request,
// ErrTooManySessions.
func (h *Handler) open(c caller, m mode) (*session, error) {
	s := newSession(h, c, m)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	idlest, full := h.room(c)
	if full {
		h.mu.Unlock()
		return nil, ErrTooManySessions
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	end(idlest)
	return s, nil
}

// load lists a tools-mode session's tools, once. It holds h.mu, as refresh does:
// a directory change committed after the read reaches the session through
// refresh, one committed before is in the read, and a newer row is never
// overwritten by an older one.
func (h *Handler) load(s *session) error {
	if s.mode != modeTools || s.loaded.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.loaded.Load() {
		return nil
	}
	enabled := 1
	err := h.cfg.Projector.Each(projector.Filter{Enabled: &enabled}, func(r *contract.Row) error {
		s.apply(r.Key, r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("mcp: reading the directory: %w", err)
	}
	s.loaded.Store(true)
	return nil
}

// adopt follows the SDK's session once the request that opened it has been
// served: the session is dropped when the SDK ends it (the client's DELETE, the
// idle timeout, Close, its token's expiry), or at once when there is none
// (initialization failed).
func (h *Handler) adopt(s *session) {
	ss := s.adopt()
	h.mu.Lock()
	if ss == nil || h.closed {
		delete(h.sessions, s.id)
		h.mu.Unlock()
		if ss != nil {
			s.close() // Close ran while the session was being opened
		}
		return
	}
	h.wg.Add(1) // before Close's Wait: Close sets closed under h.mu first
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		ss.Wait()
		endSeen()
		s.close() // stops the expiry timer
		h.mu.Lock()
		delete(h.sessions, s.id)
		h.mu.Unlock()
	}()
}

// endHold, when set, is waited on where adopt's wait has seen a session end,
// before it is closed here: a test holds it to check what a request meanwhile gets.
var endHold atomic.Pointer[chan struct{}]

func endSeen() {
	if c := endHold.Load(); c != nil {
		<-*c
	}
}

// Close ends every session and refuses new ones (503). It returns once the
// sessions have ended: each first answers the calls it has in flight (their
// receipts come from the dispatcher, which should still be running). Idempotent;
// Done is closed once it has returned.
func (h *Handler) Close() error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		defer close(h.done)
	}
	open := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		open = append(open, s)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
	h.wg.Wait()
	return nil
}

// Done is closed once Close has returned.
func (h *Handler) Done() <-chan struct{} { return h.done }
