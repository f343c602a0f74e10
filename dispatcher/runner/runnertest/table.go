package runnertest

import (
	"context"
	"strings"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner"
)

// testFailureTable drives the runner into every failure the harness's rows reach
// and checks the table against them: each literal is an instance of an entry,
// and each entry is reached, or names the test that reaches it.
func testFailureTable(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{Limits: runner.Limits{MaxResultBytes: 64}})
	d, ok := r.(runner.Documented)
	if !ok || len(d.Failures()) == 0 {
		t.Fatal("the runner exports no failure table (runner.Documented)")
	}
	table := d.Failures()
	var got []runner.Outcome
	for _, row := range h.Failures {
		got = append(got, run(t, h, r, context.Background(), runner.Call{Row: row, Body: "x"}))
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	got = append(got, run(t, h, r, canceled, runner.Call{Row: h.Block, Body: "x"}))
	got = append(got, run(t, h, r, context.Background(), runner.Call{Row: h.Large, Body: "65"}))
	for _, row := range h.Amplify {
		got = append(got, run(t, h, r, context.Background(), runner.Call{Row: row, Body: strings.Repeat("a", 1<<20)}))
	}
	reached := map[string]bool{}
	for _, o := range got {
		if e, ok := table.Match(o.Result); ok {
			reached[e.Literal] = true
		}
	}
	for lit, test := range h.Elsewhere {
		if _, ok := table.Match(lit); !ok || test == "" {
			t.Errorf("Elsewhere names %q (driven by %q), no entry of the table", lit, test)
		}
		reached[lit] = true
	}
	for _, e := range table {
		if !reached[e.Literal] {
			t.Errorf("no failure of the harness is an instance of %q", e.Literal)
		}
	}
}
