package capdir_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// An OTLP endpoint that is not an http or https URL is refused before anything
// is made, naming the flag and an example.
func TestStartRefusesABadOTelEndpoint(t *testing.T) {
	for _, endpoint := range []string{"localhost:4318", "grpc://localhost:4317", "http://", "::"} {
		dir := filepath.Join(t.TempDir(), "data")
		_, err := capdir.Start(context.Background(), capdir.Config{Log: eventlog.Config{DataDir: dir}, TerminalKey: nodetest.Key, OTelEndpoint: endpoint})
		if err == nil || !strings.Contains(err.Error(), "--otel-endpoint") || !strings.Contains(err.Error(), "http://localhost:4318") {
			t.Errorf("OTelEndpoint %q: %v", endpoint, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("OTelEndpoint %q: Start created %s before refusing it", endpoint, dir)
		}
	}
}

// A node given an OTLP endpoint traces its calls and sends the spans there when
// it stops: the collector (a local upstream here) gets them on /v1/traces.
func TestOTelEndpointExportsOnStop(t *testing.T) {
	collector := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, ""))
	n := nodetest.Start(t, func(c *capdir.Config) { c.OTelEndpoint = collector.URL })
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != http.StatusCreated {
		t.Fatalf("POST row: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`); code != http.StatusOK {
		t.Fatalf("dispatch: %d %s", code, body)
	}
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := collector.Requests()
	if len(reqs) == 0 || reqs[0].Path != "/v1/traces" || reqs[0].Method != http.MethodPost {
		t.Fatalf("collector got %d requests (%+v); want the spans POSTed to /v1/traces", len(reqs), reqs)
	}
	for _, r := range reqs {
		if strings.Contains(r.Body, "Ada") || strings.Contains(r.Body, nodetest.Key) {
			t.Errorf("the exported spans hold the call's body or the owner key")
		}
	}
}
