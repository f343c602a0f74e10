// Package nodetest starts a real capdir node for integration tests: embedded NATS on
// a temp dir, a real bbolt file, HTTP on a loopback port. At cleanup it checks the
// invariant every test must keep: replaying the log into a fresh bbolt file gives
// the same digest as the live projection.
package nodetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Key is the owner key test nodes use.
const Key = "test-terminal-key-0123456789"

// Start runs a node with HTTP on 127.0.0.1:0, logging nowhere unless opts name a
// logger. mutate may adjust the config; opts wire the node (its clock, logger,
// environment).
func Start(t testing.TB, mutate func(*capdir.Config), opts ...capdir.Option) *capdir.Node {
	t.Helper()
	cfg := capdir.Config{
		TerminalKey: Key,
		Log:         eventlog.Config{DataDir: t.TempDir()},
		HTTP:        capdir.HTTPConfig{Addr: "127.0.0.1:0"},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := capdir.Start(context.Background(), cfg, append([]capdir.Option{Quiet()}, opts...)...)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		select {
		case <-n.Done(): // the test stopped it and did its own checks
			return
		default:
		}
		// Stopped whatever the replay check finds: a check that fails ends this
		// cleanup with t.Fatal, and a node left running would hold the
		// connections that the cleanups registered before it (an httptest
		// upstream's Close) wait for.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := n.Stop(ctx); err != nil {
				t.Errorf("stop node: %v", err)
			}
		}()
		if !t.Failed() {
			CheckReplay(t, n)
		}
	})
	return n
}

// Quiet is the option of a node that logs nowhere.
func Quiet() capdir.Option { return capdir.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }

// CheckReplay waits for the projector to catch up with the log, then rebuilds the
// log into a fresh file and compares digests. A node appends on its own (its
// upstream MCP servers' tools kept in step, for one), so the two
// digests are compared only when the log did not grow between the catch-up and
// the end of the rebuild; when it did, the check starts again (a few times, then
// it fails saying the log never stood still).
func CheckReplay(t testing.TB, n *capdir.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tries = 5
	for try := 1; ; try++ {
		before, err := lastSeqs(ctx, n)
		if err != nil {
			t.Fatalf("log state: %v", err)
		}
		if err := CatchUp(ctx, n); err != nil {
			t.Fatalf("projector catch-up: %v", err)
		}
		live, err := n.Projector().Digest()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "replayed.db")
		if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: n.Log(), Breaker: n.Config().Breaker}, nil); err != nil {
			t.Fatalf("replay: %v", err)
		}
		got, err := projector.FileDigest(path)
		if err != nil {
			t.Fatal(err)
		}
		after, err := lastSeqs(ctx, n)
		if err != nil {
			t.Fatalf("log state: %v", err)
		}
		if !slices.Equal(after, before) {
			if try == tries {
				t.Fatalf("the log grew during each of %d replay checks (last sequences %v, then %v)", tries, before, after)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if got != live {
			t.Fatalf("replayed projection digest %s != live %s (log at %v)", got, live, after)
		}
		return
	}
}

// lastSeqs is the last sequence of each of the log's streams, in wire.Streams'
// order.
func lastSeqs(ctx context.Context, n *capdir.Node) ([]uint64, error) {
	seqs := make([]uint64, len(wire.Streams))
	for i, s := range wire.Streams {
		seq, err := n.Log().LastSeq(ctx, s)
		if err != nil {
			return nil, err
		}
		seqs[i] = seq
	}
	return seqs, nil
}

// CatchUp waits until the node's projector has applied everything in its log.
func CatchUp(ctx context.Context, n *capdir.Node) error {
	for _, s := range wire.Streams {
		if err := n.Projector().Settle(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Do sends an HTTP request to the node with the owner key (unless key is "-") and
// returns the status and body.
func Do(t testing.TB, n *capdir.Node, method, path, body string) (int, string) {
	t.Helper()
	return DoKey(t, n, method, path, body, Key)
}

// DoKey is Do with an explicit owner key ("" sends none).
func DoKey(t testing.TB, n *capdir.Node, method, path, body, key string) (int, string) {
	t.Helper()
	return do(t, n, method, path, body, "x-terminal-key", key)
}

// DoToken is Do with a capability token (Authorization: Bearer) instead of the
// owner key.
func DoToken(t testing.TB, n *capdir.Node, method, path, body, token string) (int, string) {
	t.Helper()
	return do(t, n, method, path, body, "Authorization", "Bearer "+token)
}

// DoHeaders is Do with the given headers (and the owner key unless headers name a
// credential themselves).
func DoHeaders(t testing.TB, n *capdir.Node, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	h := http.Header{}
	if headers["Authorization"] == "" && headers["x-terminal-key"] == "" {
		h.Set("x-terminal-key", Key)
	}
	for k, v := range headers {
		h.Add(k, v)
	}
	return doHeader(t, n, method, path, body, h)
}

// do sends the request with header set to value (unless value is empty).
func do(t testing.TB, n *capdir.Node, method, path, body, header, value string) (int, string) {
	t.Helper()
	h := http.Header{}
	if value != "" {
		h.Set(header, value)
	}
	return doHeader(t, n, method, path, body, h)
}

// client bounds each request, so a handler that never answers fails its test
// instead of the package's timeout.
var client = &http.Client{Timeout: 2 * time.Minute}

func doHeader(t testing.TB, n *capdir.Node, method, path, body string, h http.Header) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if body != "" {
		req.Header.Set("content-type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// WaitDispatchIdle waits until the dispatch consumer of l has nothing left to
// deliver, nothing delivered and unacknowledged, and nothing awaiting redelivery:
// no further call can follow.
func WaitDispatchIdle(t testing.TB, l *eventlog.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		cons, err := l.JetStream().Consumer(ctx, wire.DataStream, dispatcher.ConsumerName)
		if err != nil {
			t.Fatalf("dispatch consumer: %v", err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatalf("dispatch consumer: %v", err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the dispatch consumer never went idle: %d pending, %d unacknowledged, %d redelivered",
				info.NumPending, info.NumAckPending, info.NumRedelivered)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Receipts reads every receipt for the invocation inv in l, in log order.
func Receipts(t testing.TB, l *eventlog.Log, inv string) []wire.Receipt {
	t.Helper()
	var rcs []wire.Receipt
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var rc wire.Receipt
		if s.Type == wire.TypeReceipt && s.DataAs(&rc) == nil && rc.InvocationID == inv {
			rcs = append(rcs, rc)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read receipts: %v", err)
	}
	return rcs
}
