package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/bench"
)

// An invocation row carries, per invocation, what it cost the process and the
// log: CPU, allocations and bytes always; stored messages and the node's
// messages in and out when it is given the node's counters. Packed at 16 in
// flight, an HTTP invocation stores fewer than two messages and more than none.
func TestInvocationRowsCountTheirCosts(t *testing.T) {
	ctx := context.Background()
	e, err := bench.StartEnv(ctx, bench.EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := bench.Invocation(ctx, bench.ScenarioHTTP, "counted", e.RawHTTPInvoke(), 800, 16, 0, e.Counts)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Values
	for k, lo := range map[string]float64{
		"cpu_us_per_invocation": 1, "allocs_per_invocation": 20, "bytes_per_invocation": 1000,
		"stored_per_invocation": 0.01, "msgs_in_per_invocation": 0.01, "msgs_out_per_invocation": 0.01,
	} {
		if v[k] < lo {
			t.Errorf("%s = %v, want at least %v (values %v)", k, v[k], lo, v)
		}
	}
	if v["stored_per_invocation"] >= 2 {
		t.Errorf("stored %v messages per invocation at 16 in flight: none packed", v["stored_per_invocation"])
	}
	if !strings.Contains(r.Note, "stored messages, ") || !strings.Contains(r.Note, " allocations, ") {
		t.Errorf("note %q", r.Note)
	}

	r, err = bench.Invocation(ctx, bench.ScenarioHTTP, "uncounted", e.RawHTTPInvoke(), 200, 4, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Values["stored_per_invocation"]; ok || r.Values["allocs_per_invocation"] <= 0 {
		t.Errorf("without counters: %v", r.Values)
	}
}
