// Package capdir starts a capdir node: the event log (embedded or external NATS),
// the projector, the dispatcher workers and the HTTP facade, started and stopped
// together by [Start]. capdir serve, the integration tests and capdir bench all run
// a Node, and so does a Go program that embeds capdir with its own fn capabilities.
package capdir

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/api/console"
	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/natsrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
	"github.com/capdir/capdir/projector/ledger"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Config configures a Node: what it does, not what it is wired to (the clock,
// the logger, the environment, a listener: see Option). Each component's
// settings are held in that component's own type, defaulted and checked in its
// package, so a zero Config (with Log.DataDir) starts a working node. Start
// wires each component: the fields a comment below says Start sets are the
// node's, and Start refuses a value in them (ErrWiringInConfig).
type Config struct {
	// Log configures the event log (embedded server or NATSURL, Creds, Listen,
	// Replicas, Sync, DataMaxAge, ...). Log.DataDir is the node's data dir and is
	// required: the projection, the owner and token keys and the import spool live
	// there too. Start sets Log.Clock, Log.Logger and Log.Metrics.
	Log eventlog.Config
	// Projector configures the fold into ProjectionPath(Log.DataDir): Sync,
	// Linger (projector.DefaultLinger when 0, none when negative), BatchSize.
	Projector projector.Settings
	// Dispatch configures the dispatcher: Workers, AckWait, RunTimeout, MaxDepth
	// (how deep flow and agent steps nest), Approvals (TTL, Sweep), ...
	Dispatch dispatcher.Settings
	// API configures the HTTP facade: PublicURL and DispatchWait (MCP's too),
	// MaxImports, MaxImportBody, ...
	API api.Settings
	// HTTP configures the node's HTTP server: its address and limits (http.go).
	HTTP HTTPConfig
	// Ledger configures the receipt ledger's checkpoints (ledger.go).
	Ledger LedgerConfig
	// Breaker is the breaker policy the fold, the gate, the facade and MCP share.
	Breaker breaker.Config
	// Fn configures the fn runner. Fn.Registry holds the functions rows can name
	// (a new registry when nil); the built-ins are added to it. Register Go
	// functions there to extend capdir.
	Fn fnrunner.Config
	// HTTPRunner configures the http runner (Timeout, MaxResultBytes, ...). Start
	// sets its Env and TagSalt; a MaxIdleConnsPerHost of 0 takes Dispatch.Workers.
	HTTPRunner httprunner.Config
	// NATSRunner configures the nats runner; Start sets its Conn (the log's).
	NATSRunner natsrunner.Config
	// MCPUpstreams are the upstream MCP servers that rows of runner mcp call, by
	// name (a row's target is "<upstream>/<tool>"): the operator's own, from
	// capdir serve --mcp-stdio NAME=COMMAND ARGS… and --mcp-http NAME=URL. A row
	// never names a URL or a command itself.
	MCPUpstreams mcprunner.Static
	// MCPRunner configures the mcp runner (Limits); Start sets its Upstreams, Env
	// and TagSalt. Its upstreams are MCPUpstreams and those the owner registers
	// (PUT /api/upstreams/{name}).
	MCPRunner mcprunner.Config
	// MCPRelist is how often every upstream's tools are listed again, besides on
	// list_changed and on reconnect: DefaultMCPRelist when 0, never when negative.
	MCPRelist time.Duration
	// ComposeConfig configures flow and agent rows (agents.go).
	ComposeConfig
	// TerminalKey is the owner key (x-terminal-key); it also keys credential tags.
	TerminalKey string
	// Zone is the built-in NOW function's zone (America/Los_Angeles when empty).
	Zone string
	// SecretEnv lists the environment variables rows may name in their auth column:
	// names, PREFIX*, *SUFFIX or *, each element possibly comma-separated (see
	// runner.ParseSecretEnv). runner.DefaultSecretEnv when nil; an empty, non-nil
	// list allows none. capdir's own variables (runner.ReservedEnv) are never
	// readable. A write naming another variable is refused, and a row that names one
	// anyway fails at call time with ERR:auth:env_not_allowed:<NAME>.
	SecretEnv []string
	// Name identifies this node on receipts (the hostname when empty).
	Name string
	// TokenKeyFile is the capability tokens' signing key (PKCS #8 PEM, mode 0600),
	// created on first start: TokenKeyPath(Log.DataDir) when empty. Nodes of one
	// deployment load the same key (copy the file, or name a shared one).
	TokenKeyFile string
	// TokenAudience is the audience every token this node mints carries and every
	// token it accepts must carry: TokenAudience(key) when empty, so nodes that
	// share the key agree without configuration.
	TokenAudience string
	// OTelEndpoint, when set, traces every call (OpenTelemetry, W3C trace
	// context) and sends the spans to this OTLP/HTTP collector URL (capdir serve
	// --otel-endpoint); "" is tracing off, which costs nothing (tracing.go).
	OTelEndpoint string
}

// Validate reports every problem with c at once, before anything is created:
// each component checks its own settings.
func (c *Config) Validate() error {
	var errs []error
	if c.Log.DataDir == "" {
		errs = append(errs, errors.New("node: a data dir is required (--data)"))
	}
	if _, err := secretEnv(c.SecretEnv); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.wiringSet()...)
	if _, err := c.httpLimits(); err != nil {
		errs = append(errs, err)
	}
	if c.OTelEndpoint != "" {
		if err := tracing.CheckEndpoint(c.OTelEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("node: %w", err))
		}
	}
	httpRows := c.HTTPRunner.Limits.Validate("httprunner")
	if httpRows != nil {
		httpRows = fmt.Errorf("http rows (--http-timeout): %w", httpRows)
	}
	for _, err := range []error{c.Log.ValidateSet(), c.API.Validate(), c.Projector.Validate(), c.Dispatch.Validate(), c.Breaker.Validate(), c.ComposeConfig.Validate(),
		c.Fn.Limits.Validate("fnrunner"), httpRows, c.NATSRunner.Limits.Validate("natsrunner")} {
		if err != nil {
			errs = append(errs, fmt.Errorf("node: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Node is a running capdir node, started by [Start]. A program that embeds
// capdir writes rows through [Node.Directory], calls them with [Node.Invoke],
// mints capability tokens with [Node.Mint] and stops the node with [Node.Drain]
// and [Node.Stop]; its components are the node's own and are reached through
// methods, never replaced. Stop is idempotent.
type Node struct {
	cfg       Config
	log       *eventlog.Log
	proj      *projector.Projector
	dispatch  *dispatcher.Service
	srv       *api.Server
	mcpServer *mcp.Handler // the MCP server the facade serves at /mcp
	minter    *token.Minter
	verifier  *token.Verifier
	registry  *prometheus.Registry

	http      *http.Server
	listener  net.Listener
	console   *console.Console // nil when the node serves none
	lock      *DataDirLock
	w         wiring
	closers   []func(context.Context) error // the cleanup stack: Stop runs it from the top
	wg        sync.WaitGroup
	drainOnce sync.Once
	drainErr  error
	stopOnce  sync.Once
	stopped   chan struct{}
	mcpRunner *mcprunner.Runner // the mcp runner, whose upstream sessions Stop closes
	mcpSync   *mcpSync          // keeps the upstreams' rows in step with their tools
	ledger    *ledger.Publisher // signs the receipt ledger's checkpoints (ledger.go)
	tracer    *tracing.Tracer   // nil: tracing off (tracing.go)
	logger    *slog.Logger
	stopErr   error
	runErr    chan error
}

// ProjectionPath is where a data dir keeps its bbolt projection.
func ProjectionPath(dataDir string) string { return filepath.Join(dataDir, "projection.db") }

// Start locks the data dir (see LockDataDir: a dir another node holds is refused
// at once), opens the log and the projection, starts folding, and serves HTTP on
// the WithListener listener or cfg.HTTP.Addr when one is set. It returns once the
// projector has caught up with the log as it was at start. The node holds the
// lock until Stop. When Start fails, what it had made is closed again, in the
// reverse order, as Stop closes it.
func Start(ctx context.Context, cfg Config, opts ...Option) (_ *Node, err error) {
	w := newWiring(opts)
	if w.listener != nil {
		defer func() {
			if err != nil {
				w.listener.Close()
			}
		}()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.TerminalKey) < api.MinTerminalKey { // before the facade refuses it, with a log and a projection made
		return nil, fmt.Errorf("node: the owner key must be at least %d characters; got %d (set CAPDIR_TERMINAL_KEY to a longer one, or unset it to use the data dir's terminal.key)",
			api.MinTerminalKey, len(cfg.TerminalKey))
	}
	secrets, err := secretEnv(cfg.SecretEnv)
	if err != nil {
		return nil, err
	}
	limits, err := cfg.httpLimits()
	if err != nil {
		return nil, err
	}
	dataDir := cfg.Log.DataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	warnDataDirAccess(dataDir, w.logger)
	lock, err := LockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	n := &Node{w: w, logger: w.logger, runErr: make(chan error, 4), stopped: make(chan struct{}), registry: prometheus.NewRegistry()}
	n.onStop(func(context.Context) error { return lock.Unlock() })
	defer func() {
		if err != nil {
			n.Stop(context.Background())
		}
	}()
	if n.minter, n.verifier, err = newTokens(&cfg); err != nil {
		return nil, err
	}
	n.cfg = cfg
	m, err := newMetrics(n.registry)
	if err != nil {
		return nil, err
	}
	logCfg := cfg.Log
	logCfg.Clock, logCfg.Logger, logCfg.Metrics = w.clock, w.logger, m.log
	if n.log, err = eventlog.Open(ctx, logCfg); err != nil {
		return nil, err
	}
	n.onStop(func(context.Context) error { return n.log.Close() })
	n.proj, err = projector.Open(projector.Config{
		Path: ProjectionPath(dataDir), Log: n.log, Settings: cfg.Projector,
		Breaker: cfg.Breaker, Logger: w.logger, Metrics: m.projector, Clock: w.clock,
	})
	if err != nil {
		return nil, err
	}
	n.onStop(func(context.Context) error { return n.proj.Close() })
	if err := n.proj.CatchUp(ctx, nil); err != nil {
		return nil, err
	}
	if err := n.newLedger(cfg); err != nil {
		return nil, err
	}
	n.mcpSync = newMCPSync()
	if n.tracer, err = n.newTracer(&cfg); err != nil { // stopped after the workers, so their last spans go out
		return nil, err
	}
	if n.dispatch, err = newDispatch(n, cfg, secrets, m.dispatch); err != nil {
		return nil, err
	}
	askIndex, err := api.NewAskIndex(n.proj)
	if err != nil {
		return nil, err
	}
	ownerKey, err := ownerkey.New(ownerkey.Config{Key: cfg.TerminalKey, Clock: w.clock, Logger: w.logger}) // one throttle for /api, /mcp and the console
	if err != nil {
		return nil, err
	}
	n.mcpServer, err = mcp.New(mcp.Config{
		Search:    mcp.AskSearch(askIndex, n.proj),
		Projector: n.proj, Dispatcher: n.dispatch, TerminalKey: cfg.TerminalKey, OwnerKey: ownerKey, PublicURL: cfg.API.PublicURL,
		DispatchWait: cfg.API.DispatchWait, BreakerThreshold: cfg.Breaker.Threshold, Clock: w.clock, Logger: w.logger,
		WaitPath: func(inv string) string { return api.WaitPath(inv, cfg.API.WithDefaults().DispatchWait) },
		Tracer:   n.tracer,
	})
	if err != nil {
		return nil, err
	}
	n.onStop(func(context.Context) error { return n.mcpServer.Close() }) // at once when HTTP's shutdown has closed it
	n.srv, err = api.New(api.Config{
		Log: n.log, Projector: n.proj, Dispatcher: n.dispatch, TerminalKey: cfg.TerminalKey, OwnerKey: ownerKey,
		Settings: cfg.API, Breaker: cfg.Breaker, SecretEnv: secrets, FixedUpstreams: cfg.MCPUpstreams,
		Clock: w.clock, Logger: w.logger, Metrics: m.api, Gatherer: n.registry, Minter: n.minter,
		ImportSpoolDir:  dataDir,
		HTTPReadTimeout: limits.read, HTTPWriteTimeout: limits.write, MCP: n.mcpServer, Ask: askIndex,
		Console: n.consoleFor(cfg, askIndex), Ledger: n.ledger, Tracer: n.tracer,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.onStop(func(context.Context) error { cancel(); n.wg.Wait(); return nil })
	n.goRun(func() error { return n.proj.Run(runCtx) })
	n.goRun(func() error { return n.mcpServer.Run(runCtx) })
	n.goRun(func() error { return n.runLedger(runCtx) })
	ups := nodeUpstreams{fixed: cfg.MCPUpstreams, p: n.proj}
	n.proj.WatchUpstreams(n.mcpSync.poke)
	n.goRun(func() error { return n.runMCPSync(runCtx, ups, relistEvery(cfg)) })
	if err := n.dispatch.Start(ctx); err != nil {
		return nil, err
	}
	if w.listener != nil || cfg.HTTP.Addr != "" {
		if err := n.serveHTTP(w.listener, cfg.HTTP.Addr, limits); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// onStop pushes f on the node's cleanup stack: Stop (and a Start that fails)
// runs the stack from the top, so what was made last is closed first.
func (n *Node) onStop(f func(context.Context) error) { n.closers = append(n.closers, f) }

func (n *Node) goRun(f func() error) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := f(); err != nil {
			n.runErr <- err
		}
	}()
}

// serveHTTP serves the facade on ln, or on a new listener on addr when ln is nil.
func (n *Node) serveHTTP(ln net.Listener, addr string, limits httpLimits) error {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("node: listen %s: %w", addr, err)
		}
	}
	n.listener = ln
	n.http = limits.server(n.srv.Handler())
	n.http.RegisterOnShutdown(func() { n.mcpServer.Close() }) // MCP sessions' streams would hold Shutdown open
	if n.console != nil {
		n.http.RegisterOnShutdown(n.console.Close) // and so would the console's live streams
	}
	n.goRun(func() error {
		if err := n.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

// consoleFor is the facade's console constructor when cfg serves the console on
// its HTTP listener, else nil.
func (n *Node) consoleFor(cfg Config, askIndex *ask.Index) func(*api.Server) (http.Handler, error) {
	addr := cfg.HTTP.Addr
	if n.w.listener != nil {
		addr = n.w.listener.Addr().String()
	}
	if addr == "" || !cfg.HTTP.Console.serves(addr) {
		return nil
	}
	return func(s *api.Server) (http.Handler, error) {
		c, err := console.New(console.Config{API: s, Projector: n.proj, Ask: askIndex, DataDir: cfg.Log.DataDir, NodeName: nodeName(cfg.Name),
			Workers: n.dispatch.Busy, SecureCookie: strings.HasPrefix(strings.ToLower(cfg.API.PublicURL), "https://"),
			Clock: n.w.clock, Logger: n.w.logger})
		n.console = c
		return c, err
	}
}

// nodeName is the name receipts carry: name, else the hostname (as the
// dispatcher defaults it).
func nodeName(name string) string {
	if name == "" {
		name, _ = os.Hostname()
	}
	return name
}

// ConsoleURL is where the node serves the owner's console ("" when it does not).
func (n *Node) ConsoleURL() string {
	if n.console == nil || n.listener == nil {
		return ""
	}
	return n.URL() + "/console/"
}

// URL is the base URL the node serves HTTP on ("" when it does not).
func (n *Node) URL() string {
	if n.listener == nil {
		return ""
	}
	return "http://" + n.listener.Addr().String()
}

// Failed delivers the first error of a background component (projector, HTTP).
func (n *Node) Failed() <-chan error { return n.runErr }

// Drain stops the node taking work and lets the work in flight finish, within
// ctx: stop taking HTTP requests and let those in flight finish; then drain the
// dispatcher (stop taking invocation requests, let the calls in flight finish and
// write their receipts). The log, the projection and the data dir stay open, so
// what the calls wrote can still be read, until Stop. When ctx ends first, what
// is still in flight is cut off: HTTP connections are closed, calls are
// cancelled without a receipt and run again by another node or the next start,
// and the error matches ctx's error (and dispatcher.ErrDrainCut when calls were
// cancelled). Drain is idempotent; later calls return the first one's result.
func (n *Node) Drain(ctx context.Context) error {
	n.drainOnce.Do(func() {
		var errs []error
		if n.http != nil {
			if err := n.http.Shutdown(ctx); err != nil {
				n.http.Close()
				errs = append(errs, fmt.Errorf("node: HTTP requests in flight cut off: %w", err))
			}
		}
		if n.dispatch != nil {
			if err := n.dispatch.Drain(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		n.drainErr = errors.Join(errs...)
	})
	return n.drainErr
}

// Stop shuts the node down in order, within ctx: Drain, then close what Start
// made in the reverse order (the upstream MCP sessions, the projector and its
// bbolt file, the log) and release the data dir. Its error joins Drain's and
// every close's. Stop is idempotent; later calls return the first one's result,
// and Done is closed once it has finished.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() {
		errs := []error{n.Drain(ctx)}
		for i := len(n.closers) - 1; i >= 0; i-- {
			errs = append(errs, n.closers[i](ctx))
		}
		n.stopErr = errors.Join(errs...)
		close(n.stopped)
	})
	return n.stopErr
}

// Done is closed once Stop has finished.
func (n *Node) Done() <-chan struct{} { return n.stopped }

// KeyPath is where a data dir keeps the generated owner key.
func KeyPath(dataDir string) string { return filepath.Join(dataDir, "terminal.key") }

// TerminalKey returns the owner key: the environment's value when set, else the one
// stored in dataDir/terminal.key, generated (mode 0600) on first use. created is true
// when it was generated now. It is created atomically (writeNewKeyFile): processes
// starting on one data dir at once agree on one key, and none reads it half
// written. A stored key is read as ReadKeyFile reads it (an empty one is refused): one its
// group or others may read is refused (ErrKeyFileMode), as ssh refuses such a
// private key, and so is one that is not a regular file or is too large.
func TerminalKey(envValue, dataDir string) (key, path string, created bool, err error) {
	if envValue != "" {
		return envValue, "", false, nil
	}
	path = KeyPath(dataDir)
	if key, err := readStoredKey(path); err == nil {
		return key, path, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", path, false, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", path, false, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key = hex.EncodeToString(raw)
	if err := writeNewKeyFile(path, key); errors.Is(err, fs.ErrExist) {
		key, err := readStoredKey(path) // another process made it first
		return key, path, false, err
	} else if err != nil {
		return "", path, false, err
	}
	return key, path, true, nil
}

// secretEnv is the allow-list of Config.SecretEnv: runner.DefaultSecretEnv when nil.
func secretEnv(patterns []string) (runner.SecretEnv, error) {
	if patterns == nil {
		patterns = runner.DefaultSecretEnv
	}
	s, err := runner.ParseSecretEnv(patterns...)
	if err != nil {
		return runner.SecretEnv{}, fmt.Errorf("node: secret env (--secret-env): %w", err)
	}
	return s, nil
}

// newDispatch builds the runners (fn with the built-ins, http, nats, flow, agent) and the
// dispatch service. Every runner and the breaker's credential tag read the
// environment through the same guard, so a row reads only what secrets allows.
func newDispatch(n *Node, cfg Config, secrets runner.SecretEnv, m *dispatcher.Metrics) (*dispatcher.Service, error) {
	l, p := n.log, n.proj
	env := secrets.Guard(n.w.env)
	fn := cfg.Fn
	if fn.Registry == nil {
		fn.Registry = fnrunner.NewRegistry()
	}
	if err := fnrunner.RegisterBuiltins(fn.Registry, fnrunner.BuiltinConfig{Clock: n.w.clock, Zone: cfg.Zone}); err != nil {
		return nil, err
	}
	fnRunner, err := fnrunner.NewWithConfig(fn)
	if err != nil {
		return nil, err
	}
	salt := dispatcher.TagSaltFor(cfg.TerminalKey)
	hc := cfg.HTTPRunner
	hc.Env, hc.TagSalt = env, salt
	if hc.MaxIdleConnsPerHost == 0 {
		hc.MaxIdleConnsPerHost = cfg.Dispatch.Workers
	}
	hc.MaxPerOrigin = httpMaxPerOrigin(cfg)
	httpRunner, err := httprunner.New(hc)
	if err != nil {
		return nil, err
	}
	nc := cfg.NATSRunner
	nc.Conn = l.Conn()
	natsRunner, err := natsrunner.New(nc)
	if err != nil {
		return nil, err
	}
	mc := cfg.MCPRunner
	mc.Upstreams, mc.Env, mc.TagSalt = nodeUpstreams{fixed: cfg.MCPUpstreams, p: p}, env, salt
	mc.Connected, mc.ListChanged = n.mcpSync.poke, n.mcpSync.poke
	if n.mcpRunner, err = mcprunner.New(mc); err != nil {
		return nil, err
	}
	// Pushed before the closer that cancels runCtx, so run after it: the upstream
	// sync (runMCPSync) lists tools through this runner and must have ended first.
	n.onStop(func(context.Context) error { n.mcpRunner.Stop(); return nil })
	composed, err := composers(cfg.ComposeConfig, env, salt)
	if err != nil {
		return nil, err
	}
	return dispatcher.NewService(dispatcher.ServiceConfig{
		Log: l, Projector: p, Env: env, TagSalt: salt, Breaker: cfg.Breaker,
		Runners: withRunners(composed, runner.Runners{
			runner.RunnerFn:     fnRunner,
			runner.RunnerHTTP:   httpRunner,
			runner.RunnerNATS:   natsRunner,
			mcprunner.RunnerMCP: n.mcpRunner,
		}),
		Settings: cfg.Dispatch, Name: cfg.Name, Clock: n.w.clock, Logger: n.w.logger,
		Metrics: m, Tokens: n.verifier, Revoked: p.Revoked, HeldFile: dispatcher.HeldPath(cfg.Log.DataDir),
		Tracer: n.tracer,
	})
}

// httpMaxPerOrigin is the http runner's per-origin bound as the node sets it
// (Config.HTTPRunner.MaxPerOrigin): given, when positive; none, when negative;
// by default three quarters of the workers, so that a quarter stays free for
// every other row while one origin hangs. Under four workers there is no bound
// by default: reserving one of two or three workers would refuse an origin's
// ordinary concurrency more often than it protects anything.
func httpMaxPerOrigin(cfg Config) int {
	switch {
	case cfg.HTTPRunner.MaxPerOrigin < 0:
		return 0
	case cfg.HTTPRunner.MaxPerOrigin > 0:
		return cfg.HTTPRunner.MaxPerOrigin
	}
	workers := cfg.Dispatch.Workers
	if workers <= 0 {
		workers = dispatcher.DefaultWorkers()
	}
	if workers < 4 {
		return 0
	}
	return workers * 3 / 4
}

// nodeMetrics are the metrics of one node's components, all on the node's registry.
type nodeMetrics struct {
	log       *eventlog.Metrics
	projector *projector.Metrics
	dispatch  *dispatcher.Metrics
	api       *api.Metrics
}

// newMetrics registers the Go and process collectors and every component's metrics
// on reg, a registry of this node's own.
func newMetrics(reg *prometheus.Registry) (nodeMetrics, error) {
	var m nodeMetrics
	errs := []error{
		reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
	}
	var err error
	m.log, err = eventlog.NewMetrics(reg)
	errs = append(errs, err)
	m.projector, err = projector.NewMetrics(reg)
	errs = append(errs, err)
	m.dispatch, err = dispatcher.NewMetrics(reg)
	errs = append(errs, err)
	m.api, err = api.NewMetrics(reg)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return m, fmt.Errorf("node: metrics: %w", err)
	}
	return m, nil
}
