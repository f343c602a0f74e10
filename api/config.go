package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
	"github.com/capdir/capdir/projector/ledger"
	"github.com/prometheus/client_golang/prometheus"
)

// Settings are what an operator sets of a Server, apart from the handles and
// wiring of Config. A zero field takes its default.
type Settings struct {
	// PublicURL is the externally visible base URL used in public receipt links.
	PublicURL string
	// WriteTimeout bounds how long a write waits for its event to be projected
	// (default 10s).
	WriteTimeout time.Duration
	// DispatchWait is how long POST /api/dispatch waits for the receipt before
	// answering 202 with the invocation id (default DefaultDispatchWait).
	DispatchWait time.Duration
	// MaxBody caps request bodies (default 4 MiB), and with the log's MaxData the
	// size of one row, as sent and as the log stores it.
	MaxBody int64
	// MaxImportBody caps an import body (default DefaultMaxImportBody). The import
	// streams its rows, so memory does not grow with it.
	MaxImportBody int64
	// MaxImports is how many imports may run at once (default DefaultMaxImports); an
	// import over it is refused with 429.
	MaxImports int
}

// WithDefaults is s with each zero field at its default.
func (s Settings) WithDefaults() Settings {
	if s.WriteTimeout == 0 {
		s.WriteTimeout = 10 * time.Second
	}
	if s.DispatchWait == 0 {
		s.DispatchWait = DefaultDispatchWait
	}
	if s.MaxBody == 0 {
		s.MaxBody = 4 << 20
	}
	if s.MaxImportBody == 0 {
		s.MaxImportBody = DefaultMaxImportBody
	}
	if s.MaxImports == 0 {
		s.MaxImports = DefaultMaxImports
	}
	return s
}

// Validate reports every problem with s at once.
func (s Settings) Validate() error {
	if s.MaxBody < 0 || s.MaxImportBody < 0 || s.MaxImports < 0 {
		return errors.New("api: MaxBody, MaxImportBody and MaxImports (--max-import-bytes, --max-imports) must not be negative")
	}
	return nil
}

// Config configures a Server.
type Config struct {
	// Ask is the index behind GET /api/dispatch?ask= (NewAskIndex over Projector
	// when nil).
	Ask       *ask.Index
	Log       *eventlog.Log
	Projector *projector.Projector
	// Dispatcher serves invocations; routes that need it answer 503 when nil.
	Dispatcher Dispatcher
	// TerminalKey is the owner key checked against the x-terminal-key header.
	TerminalKey string
	// OwnerKey checks the x-terminal-key header and throttles an address's wrong
	// guesses (429 too_many_wrong_keys); a node passes the one its /mcp shares.
	// Built from TerminalKey, with the package's defaults, when nil.
	OwnerKey *ownerkey.Guard
	// Settings are the facade's own bounds and timings.
	Settings
	// ImportSpoolDir is where an import in the JSON array form is spooled while its
	// syntax is checked, before any row is written (os.TempDir() when empty). The
	// file is removed at once and vanishes when the import ends.
	ImportSpoolDir string
	// HTTPReadTimeout and HTTPWriteTimeout are the HTTP server's read and write
	// timeouts (0: none). An import, which may take longer, extends both as it goes:
	// its body may not stall for longer than HTTPReadTimeout, and its answer has
	// HTTPWriteTimeout to be written.
	HTTPReadTimeout  time.Duration
	HTTPWriteTimeout time.Duration
	// Breaker is the breaker policy, for GET /api/breaker's closing times.
	Breaker breaker.Config
	// SecretEnv is the operator's allow-list of the environment variables a row's
	// auth column may name; a write naming any other is refused. The zero value
	// allows none (the node passes runner.DefaultSecretEnv unless told otherwise).
	SecretEnv runner.SecretEnv
	Clock     func() time.Time
	Logger    *slog.Logger
	// Metrics holds the facade's own metrics (see NewMetrics); a private,
	// unregistered set when nil.
	Metrics *Metrics
	// Gatherer is what GET /metrics serves, typically the node's registry, which
	// also holds Metrics. When nil the route is not served (404): the facade never
	// serves the process-wide default registry.
	Gatherer prometheus.Gatherer
	// Minter mints the deployment's capability tokens (POST /api/tokens); required.
	Minter *token.Minter
	// FixedUpstreams are the upstream MCP servers of the operator's flags
	// (--mcp-http, --mcp-stdio): listed by GET /api/upstreams, and names the API
	// may not register or remove.
	FixedUpstreams mcprunner.Static
	// MCP, when set, is served at /mcp (the node passes an api/mcp Handler).
	MCP http.Handler
	// Ledger signs and keeps the receipt ledger's checkpoints (package
	// projector/ledger); the ledger routes answer 503 and public receipts carry no
	// proof when nil.
	Ledger *ledger.Publisher
	// Console, when set, builds the handler served at /console/ (the node passes
	// the owner's console, package api/console, which calls the Server it is given
	// for every change and read). New calls it once, with the Server it built.
	Console func(*Server) (http.Handler, error)
	// Tracer makes the facade's spans of dispatches (trace.go); nil is tracing off.
	Tracer *tracing.Tracer
}

// Defaults of Config.
const (
	// DefaultDispatchWait is how long POST /api/dispatch waits for the receipt.
	DefaultDispatchWait = 30 * time.Second
	// DefaultMaxImportBody is the default cap on an import body: 1 GiB.
	DefaultMaxImportBody = 1 << 30
	// DefaultMaxImports is how many imports may run at once by default.
	DefaultMaxImports = 2
)

func (c *Config) setDefaults() {
	c.Settings = c.Settings.WithDefaults()
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics, _ = NewMetrics(nil) // registers nothing, so it cannot fail
	}
}

// commands is the command side's configuration: c's handles, bounds and timings,
// the dispatcher's row checks and approvals when it has them.
func (c *Config) commands() command.Config {
	check, _ := c.Dispatcher.(command.RowChecker)
	approver, _ := c.Dispatcher.(command.Approver)
	return command.Config{Log: c.Log, Projector: c.Projector, Minter: c.Minter, Check: check, Approver: approver,
		SecretEnv: c.SecretEnv, MaxRow: c.MaxBody, WriteTimeout: c.WriteTimeout, DecideWait: c.DispatchWait,
		ImportSpoolDir: c.ImportSpoolDir, Clock: c.Clock, Logger: c.Logger,
		CheckUpstream: func(name, rawURL, auth string) error { _, err := mcprunner.NewHTTP(name, rawURL, auth); return err },
		FixedUpstream: func(name string) bool { _, ok := c.FixedUpstreams[name]; return ok }}
}

// MinTerminalKey is the fewest characters an owner key (x-terminal-key) may have.
const MinTerminalKey = 16

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Log == nil {
		errs = append(errs, errors.New("api: a log is required"))
	}
	if c.Projector == nil {
		errs = append(errs, errors.New("api: a projector is required"))
	}
	if err := c.Settings.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(c.TerminalKey) < MinTerminalKey {
		errs = append(errs, errors.New("api: the terminal key must be at least 16 characters"))
	}
	if c.Minter == nil {
		errs = append(errs, errors.New("api: a token minter is required"))
	}
	return errors.Join(errs...)
}
