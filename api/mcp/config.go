package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
)

// Dispatcher is what the MCP server needs from the dispatch service (the HTTP
// facade's api.Dispatcher has the same methods). Implementations must be safe
// for concurrent use.
type Dispatcher interface {
	// InvokeWait appends the request and waits for its receipt, at most wait.
	// When ctx ends or wait passes first it returns the request (with its
	// invocation id) and an error matching dispatcher.ErrPending.
	InvokeWait(ctx context.Context, req wire.InvocationRequest, wait time.Duration) (wire.Receipt, error)
	// InvokeOnce is Invoke for a tools/call sent with an Idempotency-Key: however
	// often it is sent, it runs once and every copy gets the same receipt (see
	// dispatcher.Service.InvokeOnce).
	InvokeOnce(ctx context.Context, req wire.InvocationRequest, idem dispatcher.Idempotency) (wire.Receipt, error)
	// Caller checks who presents a capability token, as the gate will: the
	// token's claims, or the refusal its receipt would carry.
	Caller(raw string) (*token.Claims, *gate.Refusal)
}

// Config configures a Handler.
type Config struct {
	// Projector is the directory the tool lists are projected from; required.
	Projector *projector.Projector
	// Dispatcher runs tools/call; required.
	Dispatcher Dispatcher
	// TerminalKey is the owner key (x-terminal-key); at least 16 characters.
	TerminalKey string
	// OwnerKey checks x-terminal-key and throttles an address's wrong guesses
	// (429 too_many_wrong_keys); a node passes the one its HTTP facade shares.
	// Built from TerminalKey, with the package's defaults, when nil.
	OwnerKey *ownerkey.Guard
	// PublicURL starts the public receipt links and the contract documents' URLs
	// (paths when empty).
	PublicURL string
	// DispatchWait is how long tools/call waits for the receipt
	// (DefaultDispatchWait when 0); past it the call is answered as pending.
	DispatchWait time.Duration
	// BreakerThreshold is the breaker's strike count, quoted by describe's
	// contract documents (the breaker package's default when 0).
	BreakerThreshold int
	// Search ranks rows for the search mode's search tool: WordMatch over the
	// directory when nil. An index (the ask index) plugs in here.
	Search Searcher
	// SessionIdle closes a session that has sent no request for this long
	// (DefaultSessionIdle when 0, never when negative).
	SessionIdle time.Duration
	// MaxSessions bounds the sessions one credential (the owner key, or one
	// capability token) holds at once (DefaultMaxSessions when 0, none when
	// negative): past it, opening one ends that credential's session idle
	// longest (limit.go).
	MaxSessions int
	// MaxBody caps one request body (DefaultMaxBody when 0).
	MaxBody int64
	// WaitPath is the HTTP route where the caller of an invocation waits for its
	// outcome with its own credential (api.WaitPath); a held or slow call's tool
	// error names it. Unset, the error names no route.
	WaitPath func(inv string) string
	Clock    func() time.Time
	Logger   *slog.Logger
	// Tracer makes the spans of tools/call (trace.go); nil is tracing off.
	Tracer *tracing.Tracer
}

// Defaults of Config.
const (
	// DefaultDispatchWait is tools/call's wait for the receipt, as POST
	// /api/dispatch's.
	DefaultDispatchWait = 30 * time.Second
	// DefaultSessionIdle closes a session idle for an hour, the longest a
	// capability token lives by default.
	DefaultSessionIdle = time.Hour
	// DefaultMaxSessions bounds one credential's sessions: each holds a server
	// of its own, its tool list and two goroutines until it ends.
	DefaultMaxSessions = 64
	// DefaultMaxBody caps a request body as the HTTP facade does: 4 MiB.
	DefaultMaxBody = 4 << 20
)

func (c *Config) setDefaults() {
	if c.DispatchWait == 0 {
		c.DispatchWait = DefaultDispatchWait
	}
	if c.SessionIdle == 0 {
		c.SessionIdle = DefaultSessionIdle
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.OwnerKey == nil && c.TerminalKey != "" {
		c.OwnerKey, _ = ownerkey.New(ownerkey.Config{Key: c.TerminalKey, Clock: c.Clock, Logger: c.Logger}) // its Config is valid: a key, the defaults
	}
	if c.Search == nil && c.Projector != nil {
		c.Search = WordMatch(c.Projector)
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Projector == nil {
		errs = append(errs, errors.New("mcp: a projector is required"))
	}
	if c.Dispatcher == nil {
		errs = append(errs, errors.New("mcp: a dispatcher is required"))
	}
	if len(c.TerminalKey) < 16 {
		errs = append(errs, errors.New("mcp: the terminal key must be at least 16 characters"))
	}
	if c.DispatchWait < 0 || c.MaxBody < 0 {
		errs = append(errs, errors.New("mcp: DispatchWait and MaxBody must not be negative"))
	}
	return errors.Join(errs...)
}
