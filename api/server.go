package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector/ask"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Dispatcher is what the facade needs from the dispatch service. Implementations
// must be safe for concurrent use; Invoke blocks until the receipt or ctx.
type Dispatcher interface {
	// Invoke appends the request and waits for its receipt. When ctx ends first it
	// returns the request (with its invocation id) and ctx's error.
	Invoke(ctx context.Context, req eventlog.InvocationRequest) (eventlog.Receipt, error)
	// BreakerDecision is the gate's decision for a breaker state now, including
	// whether the credential its row names has been replaced.
	BreakerDecision(st breaker.State) breaker.Decision
	// Caller checks who presents a capability token, as the gate will (see
	// gate.Gate.Caller): the token's claims, or the refusal its receipt would carry.
	Caller(raw string) (*token.Claims, *gate.Refusal)
}

// Server is the HTTP facade.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
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
	s := &Server{cfg: cfg, mux: http.NewServeMux(), imports: make(chan struct{}, cfg.MaxImports)}
	s.ask = cfg.Ask
	if s.ask == nil {
		var err error
		if s.ask, err = NewAskIndex(cfg.Projector); err != nil {
			return nil, err
		}
	}
	s.routes()
	s.handler = guardBody(s.mux)
	return s, nil
}

// Handler is the facade's http.Handler.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.healthz)
	if s.cfg.Gatherer != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{}))
	}
	s.registerDirectory()
	s.registerDispatch()
	s.registerBreaker()
	s.registerTokens()
	s.registerApprovals()
	if s.cfg.MCP != nil {
		s.mux.Handle("/mcp", s.cfg.MCP) // the MCP server (package api/mcp), every method
	}
}

// unauthorizedBody is an owner route's answer to a request without the owner key.
var unauthorizedBody = []byte(`{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`)

// owner wraps a handler with the x-terminal-key check, made before anything of the
// request's body is read: a refused request's body is not waited for (closeUnread).
// A capability token is not the owner's key: a caller that sent one is told the
// route needs the owner key.
func (s *Server) owner(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.isOwnerKey(r.Header.Get("x-terminal-key")) {
			closeUnread(w, r)
			if r.Header.Get("Authorization") != "" {
				writeJSON(w, http.StatusUnauthorized, ownerOnlyBody)
				return
			}
			writeJSON(w, http.StatusUnauthorized, unauthorizedBody)
			return
		}
		h(w, r)
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

// writeError writes {"error": msg} with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
