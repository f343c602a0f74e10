package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
)

// TerminalKey is the owner key of the nodes a bench run starts.
const TerminalKey = "bench-terminal-key-0123456789"

// BusClient is the bus client the nats scenario invokes as (see Env.ConnectBus).
const BusClient = "bench"

// Row keys the scenarios create.
const (
	EchoKey = "BENCH_ECHO"
	HTTPKey = "BENCH_HTTP_PING"
)

// Env is a running node plus the clients a scenario drives it with.
type Env struct {
	Node *capdir.Node
	// Client is an HTTP client with enough idle connections for 64+ callers.
	Client  *http.Client
	dir     string
	owned   bool
	busSeed string // BusClient's nkey seed file, with NATSListen

	rawMu sync.Mutex
	raw   *rawClient // RawHTTPInvoke's connections, made on first use
}

// EnvConfig configures StartEnv.
type EnvConfig struct {
	// Dir is the data directory; a new temporary directory (removed by Close) when empty.
	Dir string
	// Sync is the log's fsync policy.
	Sync string
	// Workers is the node's dispatcher workers; the node's default when 0.
	Workers int
	// NATSListen makes the embedded server accept TCP clients on a free loopback
	// port, for scenarios that play a separate bus client: BusClient, whose
	// credential StartEnv records in the data dir (see Env.ConnectBus).
	NATSListen bool
	// Compression is the log's stream compression (eventlog.Config.Compression).
	Compression string
	Logger      *slog.Logger
	// TracerProvider, when set, traces the node's calls (capdir.WithTracerProvider).
	TracerProvider trace.TracerProvider
}

// StartEnv starts a node with HTTP on 127.0.0.1:0 and the fn echo row.
func StartEnv(ctx context.Context, cfg EnvConfig) (*Env, error) {
	e := &Env{dir: cfg.Dir, Client: NewHTTPClient()}
	if e.dir == "" {
		d, err := os.MkdirTemp("", "capdir-bench-")
		if err != nil {
			return nil, err
		}
		e.dir, e.owned = d, true
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ncfg := capdir.Config{
		TerminalKey: TerminalKey,
		Name:        "bench",
		Log:         eventlog.Config{DataDir: filepath.Join(e.dir, "node"), Sync: cfg.Sync, Compression: cfg.Compression},
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
		Dispatch:    dispatcher.Settings{Workers: cfg.Workers},
	}
	if cfg.NATSListen {
		port, err := freePort()
		if err != nil {
			e.Close()
			return nil, err
		}
		ncfg.Log.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		c := eventlog.BusClient{Name: BusClient, Role: eventlog.RoleClient}
		if _, e.busSeed, err = eventlog.AddBusClient(ncfg.Log.DataDir, c, time.Now()); err != nil {
			e.Close()
			return nil, err
		}
	}
	n, err := capdir.Start(ctx, ncfg, capdir.WithLogger(cfg.Logger), capdir.WithTracerProvider(cfg.TracerProvider))
	if err != nil {
		e.Close()
		return nil, err
	}
	e.Node = n
	err = e.CreateRow(ctx, map[string]any{
		"key": EchoKey, "type": "fn", "target": "echo",
		"content": "# WHAT: returns its argument unchanged (benchmark row)\n# ARGS: $1=text",
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// ConnectBus connects to the node's NATS listener as BusClient, as a bus client
// does: its nkey seed and wire.ClientOptions. It needs EnvConfig.NATSListen.
func (e *Env) ConnectBus(opts ...nats.Option) (*nats.Conn, error) {
	if e.busSeed == "" {
		return nil, errors.New("bench: the node has no NATS listener (EnvConfig.NATSListen)")
	}
	seed, err := nats.NkeyOptionFromSeed(e.busSeed)
	if err != nil {
		return nil, err
	}
	all := append(wire.ClientOptions(BusClient), seed)
	return nats.Connect(e.Node.Log().ClientURL(), append(all, opts...)...)
}

// NewHTTPClient returns a client that keeps up to 256 idle connections per host,
// so 64 concurrent callers reuse theirs instead of dialling.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// CreateRow writes a row through POST /api/directory.
func (e *Env) CreateRow(ctx context.Context, row map[string]any) error {
	b, _ := json.Marshal(row)
	status, body, err := e.Do(ctx, "POST", "/api/directory", "application/json", b)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("bench: create row %v: %d %s", row["key"], status, body)
	}
	return nil
}

// Do sends an owner request to the node and returns its status and body.
func (e *Env) Do(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	return e.do(ctx, method, path, contentType, body, "x-terminal-key", TerminalKey)
}

// do sends a request with one credential header and returns its status and body.
func (e *Env) do(ctx context.Context, method, path, contentType string, body []byte, header, credential string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.Node.URL()+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set(header, credential)
	if contentType != "" {
		req.Header.Set("content-type", contentType)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Dispatch is POST /api/dispatch {"key","body"}; it fails unless the answer has
// the wanted status.
func (e *Env) Dispatch(ctx context.Context, key, body string, want int) ([]byte, error) {
	b, _ := json.Marshal(map[string]string{"key": key, "body": body})
	status, out, err := e.Do(ctx, "POST", "/api/dispatch", "application/json", b)
	if err != nil {
		return nil, err
	}
	if status != want {
		return out, fmt.Errorf("bench: dispatch %s: status %d, want %d: %s", key, status, want, out)
	}
	return out, nil
}

// Close stops the node and removes the data directory it made.
func (e *Env) Close() error {
	var err error
	if e.Node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = e.Node.Stop(ctx)
		cancel()
	}
	e.Client.CloseIdleConnections()
	e.rawMu.Lock()
	if e.raw != nil {
		e.raw.close()
	}
	e.rawMu.Unlock()
	if e.owned {
		os.RemoveAll(e.dir)
	}
	return err
}
