package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
)

// Each command's work is a plain function of a context and a config, callable
// without cobra: the same output and errors as the command line.
func TestRunFunctionsWithoutCobra(t *testing.T) {
	n, flags := testServer(t)
	sc := serverConfig{Server: n.URL(), KeyFile: flags[3], Timeout: time.Minute}
	ctx := context.Background()
	var out, errb bytes.Buffer
	rows := `{"key":"SAY","type":"fn","target":"echo","content":"# WHAT: say\n[\"$2+\"]"}` + "\n" + `{"key":"BAD","type":"lambda"}` + "\n"
	err := runImport(ctx, importConfig{serverConfig: sc, File: "-", In: strings.NewReader(rows), Out: &out, Err: &errb})
	if err == nil || err.Error() != "1 of 2 rows failed" || out.String() != "imported 1 of 2 rows from stdin; 1 failed\n" ||
		withoutProgress(errb.String()) != "row 1 (line 2) BAD: type: must be one of fn, http, agent, flow; got \"lambda\"\n" {
		t.Fatalf("runImport: %v\n%s%s", err, out.String(), errb.String())
	}

	out.Reset()
	if err := runInvoke(ctx, invokeConfig{serverConfig: sc, Key: "SAY", Body: "a|b|c", Out: &out}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || lines[0] != "b|c" || !strings.HasSuffix(lines[1], " PROVEN_MATERIAL_RESULT") {
		t.Fatalf("runInvoke: %q", out.String())
	}
	out.Reset()
	if err := runInvoke(ctx, invokeConfig{serverConfig: sc, Key: "SAI", Out: &out}); err == nil || err.Error() != "unknown key SAI" ||
		!strings.Contains(out.String(), `"did_you_mean":["SAY"]`) {
		t.Fatalf("runInvoke of a typo: %v %q", err, out.String())
	}

	out.Reset()
	if err := runExport(ctx, exportConfig{serverConfig: sc, Out: &out, Err: &errb}); err != nil || !strings.HasPrefix(out.String(), "[\n{\"key\":\"SAY\"") {
		t.Fatalf("runExport: %v %q", err, out.String())
	}

	out.Reset()
	if err := runBreakerList(ctx, breakerListConfig{serverConfig: sc, Out: &out}); err != nil || out.String() != "no open breakers\n" {
		t.Fatalf("runBreakerList: %v %q", err, out.String())
	}
	out.Reset()
	if err := runBreakerList(ctx, breakerListConfig{serverConfig: sc, JSON: true, Out: &out}); err != nil || out.String() != "{\"breakers\":[]}\n" {
		t.Fatalf("runBreakerList --json: %v %q", err, out.String())
	}
	if err := runBreakerReset(ctx, breakerResetConfig{serverConfig: sc, Key: "NOPE", Out: &out}); err == nil ||
		!strings.HasPrefix(err.Error(), "NOPE is neither a row nor a breaker on "+n.URL()) {
		t.Fatalf("runBreakerReset of an unknown key: %v", err)
	}
	wrong := sc
	wrong.KeyFile = writeFile(t, "wrong.key", []byte("not-the-owner-key-0123456789"))
	if err := runBreakerList(ctx, breakerListConfig{serverConfig: wrong, Out: &out}); err == nil ||
		!strings.HasPrefix(err.Error(), "GET /api/breaker: HTTP 401: unauthorized: "+n.URL()+" refused the owner key from --key-file "+wrong.KeyFile) {
		t.Fatalf("a wrong key: %v", err)
	}
	if err := runDigest(ctx, digestConfig{DataDir: n.Config().Log.DataDir, Out: &out}); !errors.Is(err, capdir.ErrDataDirInUse) {
		t.Fatalf("runDigest on a dir in use: %v", err)
	}
}

// runServe serves until its context ends, then stops cleanly and frees the data dir.
func TestRunServeStopsWithItsContext(t *testing.T) {
	defer slog.SetDefault(slog.Default()) // runServe installs its own
	dir := t.TempDir()
	logs := &serveLog{ready: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := serveConfig{LogLevel: "info", EnvKey: nodetest.Key, Err: logs, ShutdownTimeout: 10 * time.Second}
	cfg.Node = capdir.Config{Log: eventlog.Config{DataDir: dir, Sync: "1s"}, HTTP: capdir.HTTPConfig{Addr: "127.0.0.1:0"}, Projector: projector.Settings{Linger: projector.DefaultLinger}, Dispatch: dispatcher.Settings{Approvals: dispatcher.ApprovalConfig{TTL: dispatcher.DefaultApprovalTTL}}}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, cfg) }()
	var url string
	select {
	case url = <-logs.ready:
	case err := <-done:
		t.Fatalf("runServe ended before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("runServe did not log that it serves")
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	if err := capdir.CheckFree(dir); !errors.Is(err, capdir.ErrDataDirInUse) {
		t.Fatalf("while serving, the data dir is not held: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runServe after its context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runServe did not stop")
	}
	if err := capdir.CheckFree(dir); err != nil {
		t.Fatalf("after runServe, the data dir is still held: %v", err)
	}
}

// serveLog receives runServe's JSON log and reports the URL of its "capdir serving" line.
type serveLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan string
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadBytes('\n')
		if err == io.EOF {
			l.buf.Write(line) // not a whole line yet
			return len(p), nil
		}
		var rec struct {
			Msg  string `json:"msg"`
			HTTP string `json:"http"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "capdir serving" {
			l.ready <- rec.HTTP
		}
	}
}
