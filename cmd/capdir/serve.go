package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	"github.com/spf13/cobra"
)

func init() { register(serveCmd) }

// serveConfig is what capdir serve runs.
type serveConfig struct {
	Node     capdir.Config
	LogLevel string // debug, info, warn or error
	// EnvKey is $CAPDIR_TERMINAL_KEY: the owner key when set, else the data dir's
	// terminal.key (generated on first start).
	EnvKey string
	Err    io.Writer // the JSON log
	// ShutdownTimeout is how long HTTP requests and calls in flight may take to
	// finish once ctx is done (0 cancels them at once).
	ShutdownTimeout time.Duration
}

func serveCmd() *cobra.Command {
	var cfg serveConfig
	var console bool
	var mcpHTTP, mcpStdio []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a capdir node: embedded NATS (or --nats-url), projector, workers and the HTTP facade",
		Long: "Run a capdir node: embedded NATS (or --nats-url), projector, workers and the HTTP facade.\n\n" +
			envHelp() + "\n" +
			"One server per data dir: a second serve, replay, digest, compact or verify --data on it is refused while this one runs.",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.EnvKey, cfg.Err = os.Getenv(terminalKeyEnv), os.Stderr
			cfg.Node.SecretEnv = secretEnvPatterns(cmd.Flags().Changed("secret-env"), cfg.Node.SecretEnv, os.LookupEnv)
			cfg.Node.AgentProviders = agentProviders(cmd.Flags().Changed("agent-provider"), cfg.Node.AgentProviders, os.LookupEnv)
			cfg.Node.HTTP.Console = consoleMode(cmd.Flags().Changed("console"), console)
			ups, err := mcprunner.ParseUpstreams(mcpHTTP, mcpStdio)
			if err != nil {
				return fmt.Errorf("--mcp-http / --mcp-stdio: %w", err)
			}
			cfg.Node.MCPUpstreams = ups
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Node.Log.DataDir, "data", defaultDataDir(), "data directory (log store, projection, owner key); $CAPDIR_DATA")
	f.StringVar(&cfg.Node.HTTP.Addr, "http", "127.0.0.1:8080", "HTTP listen address")
	// The default is false only so that help shows no "(default true)" beside the
	// text: left out, the flag is not Changed and the node decides (consoleMode).
	f.BoolVar(&console, "console", false, "serve the owner's console at /console/ (default: only when --http is a loopback address; --console=false never, --console also on other addresses)")
	f.StringVar(&cfg.Node.API.PublicURL, "public-url", "", "public base URL used in receipt links (default http://<--http>)")
	clusterFlags(cmd, &cfg.Node.Log, "use an existing NATS cluster instead of the embedded server")
	f.StringVar(&cfg.Node.Log.Listen, "nats-listen", "", "let NATS clients reach the embedded server on host:port; they authenticate as the identities capdir bus add-client made")
	f.IntVar(&cfg.Node.Log.Replicas, "replicas", 1, "stream replicas (with --nats-url)")
	f.StringVar(&cfg.Node.Log.Sync, "sync", eventlog.DefaultSync, `log fsync policy: "always" or an interval such as 1s`)
	f.DurationVar(&cfg.Node.Log.DataMaxAge, "data-retention", 0, "how long invocation requests and receipts stay in the log (0 = forever; the projection keeps the receipts either way)")
	f.Int64Var(&cfg.Node.Log.DataMaxBytes, "data-max-bytes", 0, "bytes the log's data stream may hold; past it the oldest requests and receipts leave the log (0 = no bound)")
	f.StringVar(&cfg.Node.Log.Compression, "log-compression", eventlog.CompressionS2, `how the log's streams store their full blocks: "s2" (compressed) or "none"`)
	f.StringVar(&cfg.Node.Log.GroupCommit, "log-group-commit", eventlog.GroupCommitAuto, `send the requests and receipts that arrive while one is in flight as one atomic batch: "auto" (on with the embedded server and --sync always), "on" or "off"`)
	f.StringVar(&cfg.Node.Log.Pack, "log-pack", eventlog.PackAuto, `let capdir's own requests, and its receipts, made at about the same time share one message of the log: "auto" (on unless other nodes share the log), "on" (every node must run a version that reads packs) or "off"`)
	f.BoolVar(&cfg.Node.Projector.Sync, "projection-fsync", false, "fsync every projection batch (the projection is rebuildable from the log either way)")
	f.DurationVar(&cfg.Node.Projector.Linger, "projection-linger", projector.DefaultLinger, "how long a batch of invocation events may wait for more before the projection commits it (0 = commit at once)")
	f.IntVar(&cfg.Node.Dispatch.Workers, "workers", 0, "dispatcher workers in this process (0 = 16 per CPU)")
	f.IntVar(&cfg.Node.Dispatch.MaxCalls, "max-calls", dispatcher.DefaultMaxCalls, "bus clients' calls (capdir.call.<CLIENT>.<KEY>) this node answers at once; one more is refused at once with CALL_REFUSED busy and retry true")
	f.DurationVar(&cfg.Node.Dispatch.AckWait, "ack-wait", 30*time.Second, "how long a request a worker took may go without word from it before another worker is given it (a running call is kept alive every third of it); after a crash, a single node runs the calls it cut at its next start, a cluster's other nodes after this wait")
	f.IntVar(&cfg.Node.Breaker.Threshold, "breaker-threshold", breaker.DefaultThreshold, "consecutive upstream 401/403 answers to the owner's calls that open a row's breaker (to another caller's: that refuse that caller alone)")
	f.DurationVar(&cfg.Node.Breaker.Cooldown, "breaker-cooldown", breaker.DefaultCooldown, "how long an open breaker refuses calls")
	f.IntVar(&cfg.Node.Breaker.Quorum, "breaker-quorum", breaker.DefaultQuorum, "callers other than the owner, each refused by its own --breaker-threshold failures, that open a row's breaker for everyone")
	f.DurationVar(&cfg.Node.HTTPRunner.Timeout, "http-timeout", 30*time.Second, "timeout of one http-runner call")
	f.IntVar(&cfg.Node.HTTPRunner.MaxPerOrigin, "http-max-per-origin", 0, "http-runner calls one origin may have in flight at once; one more waits 250ms for a slot, then fails with ERR:http:origin_busy:<origin>:<max> (0 = three quarters of --workers, none under 4 workers; -1 = no bound)")
	f.StringArrayVar(&mcpHTTP, "mcp-http", nil, `an upstream MCP server over streamable HTTP that rows of runner mcp call (target "NAME/TOOL"): 'NAME=URL' or 'NAME=URL AUTH', AUTH as a row's auth column (bearer:ENV, headers:{"Authorization":"Bearer $ENV"}); repeatable`)
	f.StringArrayVar(&mcpStdio, "mcp-stdio", nil, `an upstream MCP server this node starts as a process: 'NAME=COMMAND ARGS…' (split at spaces); repeatable`)
	f.DurationVar(&cfg.Node.MCPRunner.Timeout, "mcp-timeout", 30*time.Second, "timeout of one mcp-runner call, connecting included")
	f.DurationVar(&cfg.Node.MCPRelist, "mcp-relist", capdir.DefaultMCPRelist, "how often every upstream MCP server's tools are listed again, besides on its list_changed and on reconnect (a negative value: never)")
	f.StringSliceVar(&cfg.Node.SecretEnv, "secret-env", append([]string(nil), runner.DefaultSecretEnv...),
		"environment variables rows may name in auth: NAME, PREFIX*, *SUFFIX or *; repeatable or comma-separated; empty allows none; "+
			"$CAPDIR_SECRET_ENV when not given; capdir's own (CAPDIR_*, ...) are never readable")
	f.DurationVar(&cfg.Node.HTTP.ReadHeaderTimeout, "http-read-header-timeout", capdir.DefaultHTTPReadHeaderTimeout, "how long reading a request's line and headers may take (0 = no limit)")
	f.DurationVar(&cfg.Node.HTTP.ReadTimeout, "http-read-timeout", capdir.DefaultHTTPReadTimeout, "how long reading a whole request may take, body included; an import's body may take longer but not stall for longer (0 = no limit)")
	f.DurationVar(&cfg.Node.HTTP.WriteTimeout, "http-write-timeout", api.DefaultDispatchWait+capdir.HTTPWriteMargin, "how long a request may take from the end of its headers to the end of its answer; must exceed the dispatch wait (30s), which POST /api/dispatch spends waiting for its receipt (0 = no limit)")
	f.DurationVar(&cfg.Node.HTTP.IdleTimeout, "http-idle-timeout", capdir.DefaultHTTPIdleTimeout, "how long a keep-alive connection may wait for its next request (0 = no limit)")
	f.IntVar(&cfg.Node.HTTP.MaxHeaderBytes, "http-max-header-bytes", capdir.DefaultHTTPMaxHeaderBytes, "largest request line and headers, in bytes (the GET form of dispatch carries its body in the URL); more is answered 431")
	f.IntVar(&cfg.Node.API.MaxImports, "max-imports", api.DefaultMaxImports, "imports that may run at once; one more is answered 429")
	f.Int64Var(&cfg.Node.API.MaxImportBody, "max-import-bytes", api.DefaultMaxImportBody, "largest import body, in bytes (the import streams its rows; an array is spooled to a file in the data dir)")
	f.StringVar(&cfg.Node.TokenKeyFile, "token-key", "", "capability-token signing key, PEM, mode 0600; created when missing "+
		"(default <data>/token-signing.pem); give every node of a deployment the same file")
	f.StringVar(&cfg.Node.TokenAudience, "token-audience", "", "the deployment's token audience (default capdir:<the signing key's id>)")
	f.DurationVar(&cfg.Node.Dispatch.Approvals.TTL, "approval-ttl", dispatcher.DefaultApprovalTTL, "how long a token holder's call to a sensitive row waits for the owner's approval before it expires (REFUSED_APPROVAL_EXPIRED)")
	f.StringVar(&cfg.Node.Ledger.Origin, "ledger-origin", "", "the name the receipt ledger's signed checkpoints give this log, and the node's ledger key when it is made (default capdir)")
	f.DurationVar(&cfg.Node.Ledger.Every, "checkpoint-every", capdir.DefaultCheckpointEvery, "how often to sign a checkpoint of the receipt ledger when it has grown (negative = only at start and on POST /api/ledger/checkpoint)")
	f.StringVar(&cfg.Node.Zone, "zone", "America/Los_Angeles", "time zone of the built-in now function")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT or SIGTERM, how long HTTP requests and calls in flight may take to finish; calls still running then are cancelled and run again by another node or the next start (a second signal cancels them at once)")
	f.StringVar(&cfg.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&cfg.Node.OTelEndpoint, "otel-endpoint", "", "trace every call (OpenTelemetry, W3C traceparent) and send the spans to this OTLP/HTTP collector URL, such as http://localhost:4318 (default: tracing off)")
	composeFlags(cmd, &cfg.Node)
	cmd.SetUsageFunc(groupedUsage(serveFlagGroups))
	return cmd
}

// clusterFlags registers --nats-url (described by urlUsage) and --nats-creds on
// cmd: how serve, and the tools working on a node's log, reach an external cluster.
func clusterFlags(cmd *cobra.Command, c *eventlog.Config, urlUsage string) {
	f := cmd.Flags()
	f.StringVar(&c.NATSURL, "nats-url", "", urlUsage)
	f.StringVar(&c.Creds, "nats-creds", "", "credential file for --nats-url: a .creds file or an nkey seed file (capdir bus add-client NAME --role node)")
}

// runServe runs a node until ctx is done (nil) or a component fails (its error).
// Before it creates anything it refuses a data dir in use and an address it cannot
// listen on.
func runServe(ctx context.Context, sc serveConfig) error {
	cfg := sc.Node
	logger, err := newLogger(sc.LogLevel, sc.Err)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)
	opts := []capdir.Option{capdir.WithLogger(logger)}
	var httpLn net.Listener                // capdir.Start takes it over, and closes it if it fails
	if err := cfg.Validate(); err != nil { // every component's settings, before anything is created
		return err
	}
	if sc.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout %v: give a duration of 0 or more (0 cancels calls in flight at once)", sc.ShutdownTimeout)
	}
	switch {
	case cfg.Projector.Linger < 0 || cfg.Projector.Linger > time.Second:
		return fmt.Errorf("--projection-linger %v: give a duration from 0 to 1s", cfg.Projector.Linger)
	case cfg.Projector.Linger == 0:
		cfg.Projector.Linger = -1 // 0 on the command line means no linger
	}
	for _, d := range []*time.Duration{&cfg.HTTP.ReadHeaderTimeout, &cfg.HTTP.ReadTimeout, &cfg.HTTP.WriteTimeout, &cfg.HTTP.IdleTimeout} {
		if *d == 0 {
			*d = -1 // 0 on the command line means none
		}
	}
	if cfg.Dispatch.Approvals.TTL <= 0 {
		return fmt.Errorf("--approval-ttl %v: give a positive duration, such as 15m", cfg.Dispatch.Approvals.TTL)
	}
	// Refuse a dir in use and a taken port before creating anything.
	if err := capdir.CheckFree(cfg.Log.DataDir); err != nil {
		return err
	}
	if cfg.HTTP.Addr != "" { // --http "" serves no HTTP
		ln, err := listen("--http", cfg.HTTP.Addr)
		if err != nil {
			return err
		}
		httpLn = ln
		opts = append(opts, capdir.WithListener(ln))
	}
	if cfg.Log.Listen != "" {
		// The embedded NATS server binds it itself, and on a taken port would only
		// fail its readiness wait: try it first, as --http.
		ln, err := listen("--nats-listen", cfg.Log.Listen)
		if err != nil {
			if httpLn != nil {
				httpLn.Close()
			}
			return err
		}
		ln.Close()
	}
	key, path, created, err := capdir.TerminalKey(sc.EnvKey, cfg.Log.DataDir)
	if err != nil {
		if httpLn != nil {
			httpLn.Close()
		}
		return fmt.Errorf("terminal key: %w", err)
	}
	cfg.TerminalKey = key
	switch {
	case created:
		logger.Info("generated the owner key (send it as x-terminal-key)", "path", path)
	case path != "":
		logger.Info("owner key read from the data dir", "path", path)
	default:
		logger.Info("owner key read from CAPDIR_TERMINAL_KEY")
	}
	secrets, err := runner.ParseSecretEnv(cfg.SecretEnv...)
	if err != nil {
		return fmt.Errorf("--secret-env (or CAPDIR_SECRET_ENV): %w", err)
	}
	logger.Info("rows may read these environment variables (--secret-env; never CAPDIR_*)", "secret_env", secrets.String())
	if cfg.API.PublicURL == "" {
		cfg.API.PublicURL = "http://" + cfg.HTTP.Addr
	}
	n, err := capdir.Start(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	logger.Info("capability tokens signed with", "token_key", n.Config().TokenKeyFile, "audience", n.Config().TokenAudience)
	logger.Info("capdir serving", "http", n.URL(), "data", cfg.Log.DataDir, "embedded_nats", n.Log().Embedded(), "nats_client_url", n.Log().ClientURL())
	switch {
	case n.ConsoleURL() != "":
		logger.Info("owner's console (sign in with the owner key; --console=false turns it off)", "console", n.ConsoleURL())
	case n.URL() != "" && cfg.HTTP.Console == capdir.ConsoleAuto:
		logger.Info("owner's console off: --http is not a loopback address; pass --console to serve it there (behind TLS)")
	}
	return serveUntil(ctx, n, sc.ShutdownTimeout, logger)
}

// listen listens on addr, the value of flag: an address that is not host:port, or
// one something else listens on, is refused saying what to give instead.
func listen(flag, addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		example := "127.0.0.1:8080"
		if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
			example = "127.0.0.1:" + addr // a bare port
		}
		return nil, fmt.Errorf("%s %s: %s wants host:port, e.g. %s", flag, addr, flag, example)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w; stop what listens there or give another address with %s HOST:PORT", flag, addr, err, flag)
	}
	return ln, nil
}

// consoleMode is --console's mode: the node's default (on loopback only) unless
// the flag was given.
func consoleMode(given, on bool) capdir.ConsoleMode {
	switch {
	case !given:
		return capdir.ConsoleAuto
	case on:
		return capdir.ConsoleOn
	}
	return capdir.ConsoleOff
}

// secretEnvPatterns is the allow-list serve runs with: --secret-env when given
// (empty allows none), else $CAPDIR_SECRET_ENV when set (empty allows none), else
// the flag's default.
func secretEnvPatterns(flagGiven bool, fromFlag []string, lookup func(string) (string, bool)) []string {
	if flagGiven {
		return fromFlag
	}
	if v, ok := lookup(secretEnvEnv); ok {
		return []string{v}
	}
	return fromFlag
}

// serveUntil runs n until ctx is done (a clean stop: nil) or a component fails (its
// error, so that capdir serve exits non-zero saying why), then stops it within
// timeout.
func serveUntil(ctx context.Context, n *capdir.Node, timeout time.Duration, logger *slog.Logger) error {
	var failed error
	select {
	case <-ctx.Done():
		logger.Info("shutting down: letting calls in flight finish", "timeout", timeout)
	case failed = <-n.Failed():
		logger.Error("component failed; shutting down", "err", failed, "timeout", timeout)
	}
	return errors.Join(failed, shutdown(n, timeout, logger))
}

// shutdown stops n within timeout; a second SIGINT or SIGTERM meanwhile cuts it
// short.
func shutdown(n *capdir.Node, timeout time.Duration, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := n.Stop(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: durationText})), nil
}

// durationText writes a duration as its text ("1.5s"), not as nanoseconds.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
