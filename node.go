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
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/natsrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
)

// Config configures a Node.
type Config struct {
	DataDir    string
	NATSURL    string
	NATSListen string
	Replicas   int
	Sync       string
	DataMaxAge time.Duration
	ProjSync   bool // fsync every projection batch
	// ProjLinger is how long a data-stream projection batch may wait for more
	// events before it commits: DefaultProjLinger when 0, none when negative.
	ProjLinger  time.Duration
	HTTPAddr    string
	PublicURL   string
	TerminalKey string
	Workers     int
	Breaker     breaker.Config
	// Env resolves the credentials rows name (os.LookupEnv when nil).
	Env runner.Env
	// Fns are the fn runner's functions; the built-ins are added to it. A new
	// registry when nil. Register Go functions here to extend capdir.
	Fns *fnrunner.Registry
	// Zone is the built-in NOW function's zone (America/Los_Angeles when empty).
	Zone string
	// HTTPTimeout bounds one http-runner call (30s when 0).
	HTTPTimeout time.Duration
	// AckWait is how long a worker may hold a request before redelivery.
	AckWait time.Duration
	// DispatchWait is how long POST /api/dispatch waits before answering 202.
	DispatchWait time.Duration
	// Name identifies this node on receipts (the hostname when empty).
	Name   string
	Clock  func() time.Time
	Logger *slog.Logger
}

// Node is a running capdir node. Stop is idempotent.
type Node struct {
	Config    Config
	Log       *eventlog.Log
	Projector *projector.Projector
	Dispatch  *dispatcher.Service
	API       *api.Server

	http     *http.Server
	listener net.Listener
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

// Start opens the log and the projection, starts folding, and serves HTTP on
// cfg.HTTPAddr when it is set. It returns once the projector has caught up with the
// log as it was at start.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.DataDir == "" {
		return nil, errors.New("node: a data dir is required (--data)")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	n := &Node{Config: cfg, runErr: make(chan error, 4), stopped: make(chan struct{})}
	var err error
	n.Log, err = eventlog.Open(ctx, eventlog.Config{
		DataDir: cfg.DataDir, NATSURL: cfg.NATSURL, Listen: cfg.NATSListen, Replicas: cfg.Replicas,
		Sync: cfg.Sync, DataMaxAge: cfg.DataMaxAge, Clock: cfg.Clock, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	n.Projector, err = projector.Open(projector.Config{
		Path: ProjectionPath(cfg.DataDir), Log: n.Log, Sync: cfg.ProjSync, Linger: projLinger(cfg.ProjLinger),
		Breaker: cfg.Breaker, Logger: cfg.Logger,
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
	if n.Dispatch, err = newDispatch(n.Log, n.Projector, cfg); err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	n.API, err = api.New(api.Config{
		Log: n.Log, Projector: n.Projector, Dispatcher: n.Dispatch, TerminalKey: cfg.TerminalKey,
		PublicURL: cfg.PublicURL, DispatchWait: cfg.DispatchWait, Breaker: cfg.Breaker, Clock: cfg.Clock, Logger: cfg.Logger,
	})
	if err != nil {
		n.Projector.Close()
		n.Log.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.goRun(func() error { return n.Projector.Run(runCtx) })
	if err := n.Dispatch.Start(ctx); err != nil {
		n.Stop(context.Background())
		return nil, err
	}
	if cfg.HTTPAddr != "" {
		if err := n.serveHTTP(cfg.HTTPAddr); err != nil {
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

func (n *Node) serveHTTP(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("node: listen %s: %w", addr, err)
	}
	n.listener = ln
	n.http = &http.Server{Handler: n.API.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
// projector, close bbolt, and close the log. When ctx ends first, what is still
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

// newDispatch builds the runners (fn with the built-ins, http, nats) and the
// dispatch service.
func newDispatch(l *eventlog.Log, p *projector.Projector, cfg Config) (*dispatcher.Service, error) {
	env := cfg.Env
	if env == nil {
		env = os.LookupEnv
	}
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
	return dispatcher.NewService(dispatcher.ServiceConfig{
		Log: l, Projector: p, Env: env, TagSalt: salt, Breaker: cfg.Breaker,
		Runners: runner.Runners{
			runner.RunnerFn:   fnrunner.New(fns),
			runner.RunnerHTTP: httpRunner,
			runner.RunnerNATS: natsRunner,
		},
		Workers: cfg.Workers, AckWait: cfg.AckWait, Name: cfg.Name, Clock: cfg.Clock, Logger: cfg.Logger,
	})
}
