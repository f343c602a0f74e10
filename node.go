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
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/natsrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Config configures a Node.
type Config struct {
	DataDir string
	NATSURL string
	// NATSCreds is the credential file this node presents to NATSURL (a .creds file,
	// or an nkey seed file from capdir bus add-client --role node).
	NATSCreds string
	// NATSListen makes the embedded server accept NATS clients on host:port; they
	// authenticate as the bus identities recorded in DataDir (capdir bus).
	NATSListen string
	Replicas   int
	Sync       string
	DataMaxAge time.Duration
	// DuplicateWindow is how long the log drops an event appended again under the
	// same id (eventlog.Config.DuplicateWindow: two minutes when 0).
	DuplicateWindow time.Duration
	ProjSync        bool // fsync every projection batch
	// ProjLinger is how long a data-stream projection batch may wait for more
	// events before it commits: DefaultProjLinger when 0, none when negative.
	ProjLinger  time.Duration
	HTTPAddr    string
	PublicURL   string
	TerminalKey string
	Workers     int
	Breaker     breaker.Config
	// Env resolves the credentials rows name (os.LookupEnv when nil), behind
	// SecretEnv.
	Env runner.Env
	// SecretEnv lists the environment variables rows may name in their auth column:
	// names, PREFIX*, *SUFFIX or *, each element possibly comma-separated (see
	// runner.ParseSecretEnv). runner.DefaultSecretEnv when nil; an empty, non-nil
	// list allows none. capdir's own variables (runner.ReservedEnv) are never
	// readable. A write naming another variable is refused, and a row that names one
	// anyway fails at call time with ERR:auth:env_not_allowed:<NAME>.
	SecretEnv []string
	// Fns are the fn runner's functions; the built-ins are added to it. A new
	// registry when nil. Register Go functions here to extend capdir.
	Fns *fnrunner.Registry
	// Zone is the built-in NOW function's zone (America/Los_Angeles when empty).
	Zone string
	// HTTPTimeout bounds one http-runner call (30s when 0).
	HTTPTimeout time.Duration
	// AckWait is how long a worker may hold a request before redelivery.
	AckWait time.Duration
	// DispatchWait is how long POST /api/dispatch waits before answering 202
	// (api.DefaultDispatchWait when 0).
	DispatchWait time.Duration
	// HTTPListener, when set, is where the node serves HTTP instead of listening on
	// HTTPAddr: a caller that must know the address is free before it creates
	// anything listens first. Start takes it over, and closes it when it fails.
	HTTPListener net.Listener
	// The HTTP server's limits; see http.go for the defaults a zero value takes. A
	// negative timeout means none. HTTPWriteTimeout must exceed DispatchWait.
	HTTPReadHeaderTimeout time.Duration
	HTTPReadTimeout       time.Duration
	HTTPWriteTimeout      time.Duration
	HTTPIdleTimeout       time.Duration
	HTTPMaxHeaderBytes    int
	// MaxImports is how many imports may run at once (api.DefaultMaxImports when 0).
	MaxImports int
	// MaxImportBytes caps an import body (api.DefaultMaxImportBody when 0).
	MaxImportBytes int64
	// Name identifies this node on receipts (the hostname when empty).
	Name string
	// TokenKeyFile is the capability tokens' signing key (PKCS #8 PEM, mode 0600),
	// created on first start: TokenKeyPath(DataDir) when empty. Nodes of one
	// deployment load the same key (copy the file, or name a shared one).
	TokenKeyFile string
	// TokenAudience is the audience every token this node mints carries and every
	// token it accepts must carry: TokenAudience(key) when empty, so nodes that
	// share the key agree without configuration.
	TokenAudience string
	// ApprovalTTL is how long a token holder's call to a sensitive row waits for
	// the owner's decision before it expires (dispatcher.DefaultApprovalTTL when 0);
	// ApprovalSweep is how often the node looks for expired approvals (2s when 0).
	ApprovalTTL   time.Duration
	ApprovalSweep time.Duration
	// Clock is the node's clock: the log's, the gate's (breakers, token expiry),
	// the projector's and the facade's; time.Now when nil.
	Clock  func() time.Time
	Logger *slog.Logger
	// ComposeConfig configures flow and agent rows (agents.go).
	ComposeConfig
}

// Node is a running capdir node. Stop is idempotent.
type Node struct {
	Config    Config
	Log       *eventlog.Log
	Projector *projector.Projector
	Dispatch  *dispatcher.Service
	API       *api.Server
	// MCP is the MCP server the facade serves at /mcp.
	MCP *mcp.Handler
	// Minter mints this deployment's capability tokens (POST /api/tokens), and
	// Verifier checks them for the gate; one of each per node (the verifier caches).
	Minter   *token.Minter
	Verifier *token.Verifier
	// Registry holds this node's metrics (and the Go and process collectors), the
	// registry its GET /metrics serves. Two nodes in one process count apart.
	// Register an embedder's own collectors on it to serve them there too.
	Registry *prometheus.Registry

	http     *http.Server
	listener net.Listener
	lock     *DataDirLock
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
	stopped  chan struct{}
	stopErr  error
	runErr   chan error
}

// DefaultProjLinger is the default Config.ProjLinger. Nobody waits for it: a
// dispatch is answered when its receipt is appended (or read from the log, when
// another node's worker wrote it), and a read that must see the latest events
// settles, which cuts the linger short. Only batches under load linger; there it
// turns a bbolt commit per event or two into one per hundred or so.
const DefaultProjLinger = 10 * time.Millisecond

func projLinger(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultProjLinger
	case d < 0:
		return 0
	}
	return d
}

// ProjectionPath is where a data dir keeps its bbolt projection.
func ProjectionPath(dataDir string) string { return filepath.Join(dataDir, "projection.db") }

// Start locks the data dir (see LockDataDir: a dir another node holds is refused
// at once), opens the log and the projection, starts folding, and serves HTTP on
// cfg.HTTPListener or cfg.HTTPAddr when one is set. It returns once the projector
// has caught up with the log as it was at start. The node holds the lock until Stop.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	if cfg.HTTPListener != nil {
		defer func() {
			if err != nil {
				cfg.HTTPListener.Close()
			}
		}()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.DataDir == "" {
		return nil, errors.New("node: a data dir is required (--data)")
	}
	secrets, err := secretEnv(cfg.SecretEnv)
	if err != nil {
		return nil, err
	}
	limits, err := cfg.httpLimits()
	if err != nil {
		return nil, err
	}
	if err := cfg.ComposeConfig.Validate(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	lock, err := LockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Unlock()
		}
	}()
	minter, verifier, err := newTokens(&cfg)
	if err != nil {
		return nil, err
	}
	n := &Node{Config: cfg, lock: lock, runErr: make(chan error, 4), stopped: make(chan struct{}), Registry: prometheus.NewRegistry(),
		Minter: minter, Verifier: verifier}
	m, err := newMetrics(n.Registry)
	if err != nil {
		return nil, err
	}
	n.Log, err = eventlog.Open(ctx, eventlog.Config{
		DataDir: cfg.DataDir, NATSURL: cfg.NATSURL, Creds: cfg.NATSCreds, Listen: cfg.NATSListen, Replicas: cfg.Replicas,
		Sync: cfg.Sync, DataMaxAge: cfg.DataMaxAge, DuplicateWindow: cfg.DuplicateWindow, Clock: cfg.Clock, Logger: cfg.Logger, Metrics: m.log,
	})
	if err != nil {
		return nil, err
	}
	n.Projector, err = projector.Open(projector.Config{
		Path: ProjectionPath(cfg.DataDir), Log: n.Log, Sync: cfg.ProjSync, Linger: projLinger(cfg.ProjLinger),
		Breaker: cfg.Breaker, Logger: cfg.Logger, Metrics: m.projector, Clock: cfg.Clock,
	})
	if err != nil {
		n.Log.Close()
		return nil, err
	}
	if err := n.Projector.CatchUp(ctx, nil); err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	if n.Dispatch, err = newDispatch(n, cfg, secrets, m.dispatch); err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	askIndex, err := api.NewAskIndex(n.Projector)
	if err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	n.MCP, err = mcp.New(mcp.Config{
		Search:    mcp.AskSearch(askIndex, n.Projector),
		Projector: n.Projector, Dispatcher: n.Dispatch, TerminalKey: cfg.TerminalKey, PublicURL: cfg.PublicURL,
		DispatchWait: cfg.DispatchWait, BreakerThreshold: cfg.Breaker.Threshold, Clock: cfg.Clock, Logger: cfg.Logger,
	})
	if err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	n.API, err = api.New(api.Config{
		Log: n.Log, Projector: n.Projector, Dispatcher: n.Dispatch, TerminalKey: cfg.TerminalKey,
		PublicURL: cfg.PublicURL, DispatchWait: cfg.DispatchWait, Breaker: cfg.Breaker, SecretEnv: secrets,
		Clock: cfg.Clock, Logger: cfg.Logger, Metrics: m.api, Gatherer: n.Registry, Minter: n.Minter,
		MaxImports: cfg.MaxImports, MaxImportBody: cfg.MaxImportBytes, ImportSpoolDir: cfg.DataDir,
		HTTPReadTimeout: limits.read, HTTPWriteTimeout: limits.write, MCP: n.MCP, Ask: askIndex,
	})
	if err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.goRun(func() error { return n.Projector.Run(runCtx) })
	n.goRun(func() error { return n.MCP.Run(runCtx) })
	if err := n.Dispatch.Start(ctx); err != nil {
		n.Stop(context.Background())
		return nil, err
	}
	if cfg.HTTPListener != nil || cfg.HTTPAddr != "" {
		if err := n.serveHTTP(cfg.HTTPListener, cfg.HTTPAddr, limits); err != nil {
			n.Stop(context.Background())
			return nil, err
		}
	}
	return n, nil
}

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
	n.http = limits.server(n.API.Handler())
	n.http.RegisterOnShutdown(n.MCP.Close) // MCP sessions' streams would hold Shutdown open
	n.goRun(func() error {
		if err := n.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
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

// Stop shuts the node down in order, within ctx: stop taking HTTP requests and let
// those in flight finish; drain the dispatcher (stop taking invocation requests,
// let the calls in flight finish and write their receipts); then stop the
// projector, close bbolt, close the log, and release the data dir. When ctx ends first, what is still
// in flight is cut off: HTTP connections are closed, calls are cancelled without a
// receipt and run again by another node or the next start, and the error matches
// ctx's error (and dispatcher.ErrDrainCut when calls were cancelled). Stop is
// idempotent; later calls return the first one's result.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() {
		var errs []error
		if n.http != nil {
			if err := n.http.Shutdown(ctx); err != nil {
				n.http.Close()
				errs = append(errs, fmt.Errorf("node: HTTP requests in flight cut off: %w", err))
			}
		}
		if n.Dispatch != nil {
			if err := n.Dispatch.Drain(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if n.cancel != nil {
			n.cancel()
		}
		n.wg.Wait()
		if err := n.Projector.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := n.Log.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := n.lock.Unlock(); err != nil {
			errs = append(errs, err)
		}
		n.stopErr = errors.Join(errs...)
		close(n.stopped)
	})
	return n.stopErr
}

// Stopped is closed once Stop has finished.
func (n *Node) Stopped() <-chan struct{} { return n.stopped }

// KeyPath is where a data dir keeps the generated owner key.
func KeyPath(dataDir string) string { return filepath.Join(dataDir, "terminal.key") }

// TerminalKey returns the owner key: the environment's value when set, else the one
// stored in dataDir/terminal.key, generated (mode 0600) on first use. created is true
// when it was generated now.
func TerminalKey(envValue, dataDir string) (key, path string, created bool, err error) {
	if envValue != "" {
		return envValue, "", false, nil
	}
	path = KeyPath(dataDir)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), path, false, nil
	} else if !os.IsNotExist(err) {
		return "", path, false, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", path, false, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key = hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
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
	l, p := n.Log, n.Projector
	env := cfg.Env
	if env == nil {
		env = os.LookupEnv
	}
	env = secrets.Guard(env)
	fns := cfg.Fns
	if fns == nil {
		fns = fnrunner.NewRegistry()
	}
	if err := fnrunner.RegisterBuiltins(fns, fnrunner.BuiltinConfig{Clock: cfg.Clock, Zone: cfg.Zone}); err != nil {
		return nil, err
	}
	salt := dispatcher.TagSaltFor(cfg.TerminalKey)
	httpRunner, err := httprunner.New(httprunner.Config{Env: env, Timeout: cfg.HTTPTimeout, TagSalt: salt, MaxIdleConnsPerHost: cfg.Workers})
	if err != nil {
		return nil, err
	}
	natsRunner, err := natsrunner.New(natsrunner.Config{Conn: l.Conn()})
	if err != nil {
		return nil, err
	}
	composed, err := composers(cfg.ComposeConfig, env, salt)
	if err != nil {
		return nil, err
	}
	return dispatcher.NewService(dispatcher.ServiceConfig{
		Log: l, Projector: p, Env: env, TagSalt: salt, Breaker: cfg.Breaker,
		Runners: withRunners(composed, runner.Runners{
			runner.RunnerFn:   fnrunner.New(fns),
			runner.RunnerHTTP: httpRunner,
			runner.RunnerNATS: natsRunner,
		}),
		Workers: cfg.Workers, AckWait: cfg.AckWait, Name: cfg.Name, Clock: cfg.Clock, Logger: cfg.Logger,
		Metrics: m, Tokens: n.Verifier, Revoked: p.Revoked, MaxDepth: cfg.FlowMaxDepth,
		Approvals: dispatcher.ApprovalConfig{TTL: cfg.ApprovalTTL, Sweep: cfg.ApprovalSweep},
	})
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
