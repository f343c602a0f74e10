package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Log is an open connection to capdir's event log. It is safe for concurrent use.
// Close is idempotent.
type Log struct {
	cfg     Config
	srv     *server.Server // nil when connected to an external cluster
	auth    *busAuth       // the embedded server's authentication; nil when it does not listen
	connOpt []nats.Option  // what authenticates capdir's connections
	nc      *nats.Conn
	js      jetstream.JetStream
	pl      *pipeline // the async appends
	streams map[string]jetstream.Stream
	retry   []jetstream.PublishOpt // every append's: sent again while its stream elects a leader
	disk    *diskGuard             // the embedded store's full disk; nil on an external cluster
	// restart is held by restartJetStream, and read-held by State: while JetStream
	// restarts, its streams are missing for a moment, and a reader of State must
	// not take that for a log that lost them.
	restart sync.RWMutex
	// calls is the responders' connection (respond.go), opened by the first.
	calls callsConn

	closeOnce sync.Once
	closing   chan struct{}  // closed when Close begins
	reapMu    sync.Mutex     // orders starting a reaper before Close's wait for them
	reapers   sync.WaitGroup // the followers' consumer reapers (see reap); Close waits for them
	diskDone  chan struct{}  // closed when watchDisk has returned (nil: not started)
	closed    chan struct{}

	// followStall and followHang stand in, for tests, for the follower's stall
	// timings and for an iterator that goes silent (follow_source.go).
	followStall time.Duration
	followHang  func(stopped <-chan struct{}) bool
}

// Open starts the embedded server (or connects to cfg.NATSURL), waits until JetStream
// answers, and creates or updates both streams.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Log{cfg: cfg, streams: map[string]jetstream.Stream{}, closing: make(chan struct{}), closed: make(chan struct{}),
		retry: []jetstream.PublishOpt{jetstream.WithRetryWait(electionRetryWait), jetstream.WithRetryAttempts(int(cfg.ElectionWait / electionRetryWait))}}
	if err := l.connect(); err != nil {
		l.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := l.probe(ctx); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.ensureStreams(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) connect() error {
	opts := []nats.Option{nats.Name("capdir"), nats.MaxReconnects(-1)}
	if l.cfg.NATSURL != "" {
		if l.cfg.Creds != "" {
			creds, err := credsOption(l.cfg.Creds)
			if err != nil {
				return err
			}
			l.connOpt = append(l.connOpt, creds)
		}
		nc, err := nats.Connect(l.cfg.NATSURL, append(opts, l.connOpt...)...)
		if errors.Is(err, nats.ErrAuthorization) {
			return fmt.Errorf("%w: %s answered %v: give a credential its configuration admits with --nats-creds (the node's nkey seed or .creds file)", ErrNotAdmitted, l.cfg.NATSURL, err)
		}
		if err != nil {
			return fmt.Errorf("eventlog: connect %s: %w", l.cfg.NATSURL, err)
		}
		l.nc = nc
	} else {
		if l.cfg.Listen != "" {
			auth, err := newBusAuth(l.cfg.DataDir)
			if err != nil {
				return err
			}
			l.auth = auth
			l.connOpt = append(l.connOpt, auth.connOption())
		}
		l.disk = newDiskGuard(l.cfg.storeDir())
		srv, err := startEmbedded(&l.cfg, l.auth, l.disk.noSpace)
		if err != nil {
			return err
		}
		l.srv = srv
		l.diskDone = make(chan struct{})
		go l.watchDisk()
		l.connOpt = append(l.connOpt, nats.InProcessServer(srv))
		nc, err := nats.Connect("", append(opts, l.connOpt...)...)
		if err != nil {
			return fmt.Errorf("eventlog: in-process connect: %w", err)
		}
		l.nc = nc
	}
	js, err := jetstream.New(l.nc, jetstream.WithPublishAsyncMaxPending(4096), jetstream.WithPublishAsyncTimeout(l.cfg.AckTimeout))
	if err != nil {
		return fmt.Errorf("eventlog: jetstream: %w", err)
	}
	l.js = js
	pl, err := newPipeline(l.nc, l.cfg.AckTimeout, electionRetryWait, int(l.cfg.ElectionWait/electionRetryWait))
	if err != nil {
		return fmt.Errorf("eventlog: the appends' inbox: %w", err)
	}
	l.pl = pl
	return nil
}

// NewConn opens another connection to the log's server with capdir's own
// credential (in-process to the embedded server): for a component whose traffic
// should not share the log's connection, or a test playing a bus client without a
// TCP listener. The caller closes it.
func (l *Log) NewConn(opts ...nats.Option) (*nats.Conn, error) {
	all := append([]nats.Option{nats.Name("capdir")}, l.connOpt...)
	return nats.Connect(l.cfg.NATSURL, append(all, opts...)...)
}

// startEmbedded starts the embedded server; noSpace is called when its store
// reports a write that found no space.
func startEmbedded(cfg *Config, auth *busAuth, noSpace func()) (*server.Server, error) {
	always, interval, _ := cfg.syncPolicy()
	opts := &server.Options{
		ServerName:   "capdir",
		JetStream:    true,
		StoreDir:     cfg.storeDir(),
		SyncAlways:   always,
		SyncInterval: interval,
		NoSigs:       true,
		MaxPayload:   EmbeddedMaxPayload,
		DontListen:   cfg.Listen == "",
	}
	if cfg.Listen != "" {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
		if err := auth.apply(opts); err != nil {
			return nil, err
		}
		if len(auth.clients) == 0 {
			cfg.Logger.Warn("the embedded NATS server listens, but no bus client is recorded: none can connect; add one with capdir bus add-client NAME and restart", "listen", cfg.Listen)
		} else {
			cfg.Logger.Info("NATS clients must authenticate; admitted (capdir bus list)", "listen", cfg.Listen, "clients", identityNames(auth.clients))
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("eventlog: embedded server: %w", err)
	}
	srv.SetLoggerV2(serverLog{l: cfg.Logger, noSpace: noSpace}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(cfg.StartTimeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("%w: embedded server did not accept connections within %s", ErrNotReady, cfg.StartTimeout)
	}
	if auth != nil {
		if err := auth.enableJetStream(srv); err != nil {
			srv.Shutdown()
			return nil, err
		}
	}
	return srv, nil
}

// probe waits until JetStream itself answers an account info request: a server can
// accept connections before its JetStream subsystem has recovered its streams.
func (l *Log) probe(ctx context.Context) error {
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := l.js.AccountInfo(rctx)
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrNotReady, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (l *Log) ensureStreams(ctx context.Context) error {
	if l.cfg.Existing {
		return l.lookupStreams(ctx)
	}
	for _, name := range wire.Streams {
		sc := jetstream.StreamConfig{
			Name:        name,
			Subjects:    wire.StreamSubjects(name),
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			Replicas:    l.cfg.Replicas,
			Duplicates:  l.cfg.DuplicateWindow,
			AllowDirect: true,
			Compression: jetstream.NoCompression,
			// Group commit's atomic batches, on the stream whose appends it sends.
			AllowAtomicPublish: name == wire.DataStream && l.cfg.groupCommit(),
		}
		if l.cfg.Compression == CompressionS2 {
			sc.Compression = jetstream.S2Compression
		}
		if name == wire.DataStream {
			sc.MaxAge = l.cfg.DataMaxAge
			if l.cfg.DataMaxBytes > 0 {
				sc.MaxBytes = l.cfg.DataMaxBytes
			}
		}
		s, err := askAgain(ctx, func(ctx context.Context) (jetstream.Stream, error) { return l.js.CreateOrUpdateStream(ctx, sc) })
		if err != nil {
			return fmt.Errorf("eventlog: stream %s: %w", name, err)
		}
		l.streams[name] = s
	}
	l.startGroupCommit()
	l.startPacking()
	return nil
}

// askAgain makes a JetStream API request until it is answered or ctx ends, each
// attempt bounded by startAttemptWait. A request that reaches the cluster while
// it elects its meta leader (a server lost, another coming back) can go
// unanswered for good, though the cluster answers the same request a moment
// later; waiting out the whole start for the one request failed the start. A
// cluster that has elected its leader but not yet heard from enough servers to
// place a stream's replicas (one just started, servers coming back) answers
// that none are suitable (jsClusterNoPeers), which a moment later it does not:
// asked again too.
func askAgain[T any](ctx context.Context, ask func(context.Context) (T, error)) (T, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, startAttemptWait)
		v, err := ask(actx)
		cancel()
		if err == nil || (!unanswered(err) && !errors.Is(err, nats.ErrNoResponders) && !noPeersYet(err)) || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(electionRetryWait):
		}
	}
}

// jsClusterNoPeers is the JetStream API's error code for a stream whose
// replicas no set of servers the cluster knows can hold ("no suitable peers for
// placement"; nats-server's JSClusterNoPeersErrF).
const jsClusterNoPeers jetstream.ErrorCode = 10005

// noPeersYet reports whether err is the cluster's answer that it cannot place a
// stream's replicas on the servers it knows of now.
func noPeersYet(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jsClusterNoPeers
}

// startAttemptWait bounds one attempt of a request askAgain makes: far longer
// than an answer takes, short beside Config.StartTimeout.
const startAttemptWait = 5 * time.Second

// lookupStreams opens the streams as they are (Config.Existing).
func (l *Log) lookupStreams(ctx context.Context) error {
	for _, name := range wire.Streams {
		s, err := askAgain(ctx, func(ctx context.Context) (jetstream.Stream, error) { return l.js.Stream(ctx, name) })
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: %s holds no stream %s: is this the log of a capdir node (its --nats-url and --nats-creds)?", ErrStreamNotFound, l.where(), name)
		}
		if err != nil {
			return fmt.Errorf("eventlog: stream %s: %w", name, err)
		}
		l.streams[name] = s
	}
	l.startGroupCommit()
	l.startPacking()
	return nil
}

// where names the log's servers for a message: the cluster's URLs, or the
// embedded store.
func (l *Log) where() string {
	if l.cfg.NATSURL != "" {
		return l.cfg.NATSURL
	}
	return l.cfg.storeDir()
}

// EmbeddedMaxPayload is the largest message the embedded server accepts. (An
// external cluster sets its own, 1 MB by default; see [Log.MaxPayload].)
const EmbeddedMaxPayload = 8 << 20

// MaxPayload is the largest message the connected server accepts: an event's whole
// envelope must fit in it.
func (l *Log) MaxPayload() int { return int(l.pl.maxPayload.Load()) }

// EnvelopeReserve is what an event needs beside its data: the envelope's id, type,
// time and actor, and the message headers. An event's data fits in the log when it
// is at most [Log.MaxData] bytes.
const EnvelopeReserve = 64 << 10

// MaxData is the largest event data (a row, a body, a receipt's body and result
// together) the log accepts: MaxPayload less EnvelopeReserve.
func (l *Log) MaxData() int { return l.MaxPayload() - EnvelopeReserve }

// Conn is the underlying NATS connection (shared; do not close it).
func (l *Log) Conn() *nats.Conn { return l.nc }

// JetStream is the underlying JetStream context.
func (l *Log) JetStream() jetstream.JetStream { return l.js }

// Embedded reports whether the log runs an embedded server.
func (l *Log) Embedded() bool { return l.srv != nil }

// OtherNodes reports whether another capdir process may append to the log's
// streams as capdir does: always on an external cluster; on the embedded server,
// only when it listens and admitted a node identity (RoleNode) when it started.
// Bus clients and services never can (their permissions and accounts).
func (l *Log) OtherNodes() bool {
	if l.srv == nil {
		return true
	}
	if l.auth == nil {
		return false
	}
	for _, c := range l.auth.clients {
		if c.Role == RoleNode {
			return true
		}
	}
	return false
}

// ClientURL is the embedded server's TCP URL when it listens, else "".
func (l *Log) ClientURL() string {
	if l.srv == nil || l.cfg.Listen == "" {
		return ""
	}
	return l.srv.ClientURL()
}

// Full is closed once the log's disk is found full (see ErrDiskFull): an append
// waiting for its acknowledgement then stops waiting, with the error FullError
// gives. Nil on an external cluster, whose servers answer such an append
// themselves.
func (l *Log) Full() <-chan struct{} { return l.disk.filled() }

// FullError is the refusal of an append that was waiting when Full was closed. It
// matches ErrDiskFull.
func (l *Log) FullError() error { return l.disk.refusalOnceFilled() }

// Done is closed once Close has run.
func (l *Log) Done() <-chan struct{} { return l.closed }

// Close drains the connection (flushing pending async appends) and shuts the embedded
// server down. It is idempotent.
func (l *Log) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.reapMu.Lock()
		close(l.closing)
		l.reapMu.Unlock()
		l.reapers.Wait()
		if l.diskDone != nil {
			<-l.diskDone
		}
		if l.pl != nil {
			select {
			case <-l.pl.complete():
			case <-time.After(5 * time.Second):
				err = errors.New("eventlog: pending appends not acknowledged within 5s")
			}
		}
		l.calls.close()
		if l.nc != nil {
			l.nc.Close()
		}
		if l.srv != nil {
			l.srv.Shutdown()
			l.srv.WaitForShutdown()
		}
		close(l.closed)
	})
	return err
}
