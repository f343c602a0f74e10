package e2e_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/prometheus/client_golang/prometheus"
)

// scrape reads GET /metrics of n, without an owner key, as Prometheus would.
func scrape(t *testing.T, n *capdir.Node) string {
	t.Helper()
	code, body := nodetest.DoKey(t, n, "GET", "/metrics", "", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	return body
}

// sample is the value of the series written exactly as series (name and labels) in a
// text exposition, and whether it is there.
func sample(exposition, series string) (float64, bool) {
	for line := range strings.Lines(exposition) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(rest, 64)
		return v, err == nil
	}
	return 0, false
}

// Each node counts on its own registry and serves it on its own /metrics: two nodes
// in one process do not share metrics, and nothing is on the process-wide default
// registry.
func TestNodeMetricsArePerNode(t *testing.T) {
	a := nodetest.Start(t, nil)
	b := nodetest.Start(t, nil)
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greet\n[\"Hello, $1!\"]"}`
	for _, n := range []*capdir.Node{a, b} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("write row: %d %s", code, body)
		}
	}
	dispatch := func(n *capdir.Node, times int) {
		for range times {
			if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`); code != 200 || !strings.Contains(body, "Hello, Ada!") {
				t.Fatalf("dispatch: %d %s", code, body)
			}
		}
	}
	dispatch(a, 3)
	dispatch(b, 1)

	for _, tc := range []struct {
		name string
		n    *capdir.Node
		want float64
	}{{"a", a, 3}, {"b", b, 1}} {
		series := []string{
			`capdir_invocations_total{status="PROVEN_MATERIAL_RESULT"}`,
			`capdir_invocation_seconds_count`,
			`capdir_log_appends_total{result="ok",type="RECEIPT"}`,
			`capdir_log_appends_total{result="ok",type="INVOCATION_REQUESTED"}`,
		}
		// A dispatch can be answered a moment before its worker has counted it (the
		// projection may wake the caller first): wait for the counts, within bounds.
		var text string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			text = scrape(t, tc.n)
			done := true
			for _, s := range series {
				if got, ok := sample(text, s); !ok || got < tc.want {
					done = false
				}
			}
			if done || time.Now().After(deadline) {
				break
			}
		}
		for _, series := range series {
			if got, ok := sample(text, series); !ok || got != tc.want {
				t.Errorf("node %s: %s = %v (present %v), want %v", tc.name, series, got, ok, tc.want)
			}
		}
		// Every metric keeps its name, and the node's registry has the Go and
		// process collectors.
		for _, name := range []string{
			"capdir_log_appends_total", "capdir_projector_lag_events", "capdir_projector_batch_events",
			"capdir_projector_events_applied_total", "capdir_projector_events_skipped_total", "capdir_invocations_total", "capdir_invocation_seconds",
			"go_goroutines", "process_cpu_seconds_total",
		} {
			if !strings.Contains(text, "# TYPE "+name+" ") {
				t.Errorf("node %s: /metrics has no %s", tc.name, name)
			}
		}
	}

	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "capdir_") {
			t.Errorf("%s is on the default registry", f.GetName())
		}
	}
}
