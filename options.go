package capdir

import (
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/capdir/capdir/dispatcher/runner"
	"go.opentelemetry.io/otel/trace"
)

// An Option passes Start what the node is wired to rather than what it is
// configured to do: its clock, its logger, the environment credentials are read
// from, a listener made ahead. Config holds the choices; an Option the
// surroundings a program or a test runs the node in.
type Option func(*wiring)

// wiring is what the options set, defaulted by Start.
type wiring struct {
	clock    func() time.Time
	logger   *slog.Logger
	env      runner.Env
	listener net.Listener
	// tracerProvider, when set, traces the node's calls (WithTracerProvider).
	tracerProvider trace.TracerProvider
}

// WithClock sets the node's clock: the log's, the gate's (breakers, token
// expiry), the projector's, the facade's and the minter's. time.Now by default.
func WithClock(clock func() time.Time) Option { return func(w *wiring) { w.clock = clock } }

// WithLogger sets the logger every component of the node writes to.
// slog.Default() by default.
func WithLogger(l *slog.Logger) Option { return func(w *wiring) { w.logger = l } }

// WithEnv sets where the credentials rows name are read (os.LookupEnv by
// default). The node reads it only behind Config.SecretEnv.
func WithEnv(env runner.Env) Option { return func(w *wiring) { w.env = env } }

// WithListener makes the node serve HTTP on ln instead of listening on
// Config.HTTP.Addr: a caller that must know the address is free before it
// creates anything listens first. Start takes ln over, and closes it when it
// fails.
func WithListener(ln net.Listener) Option { return func(w *wiring) { w.listener = ln } }

// newWiring applies opts over the defaults.
func newWiring(opts []Option) wiring {
	var w wiring
	for _, o := range opts {
		if o != nil {
			o(&w)
		}
	}
	if w.clock == nil {
		w.clock = time.Now
	}
	if w.logger == nil {
		w.logger = slog.Default()
	}
	if w.env == nil {
		w.env = os.LookupEnv
	}
	return w
}
