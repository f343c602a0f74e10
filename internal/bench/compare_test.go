package bench_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/bench"
)

func TestReadReportRefusesWhatBenchDoesNotPrint(t *testing.T) {
	for _, in := range []string{
		"",
		"hello",
		`{"results":[]}`,
		`{"results":[{"scenario":"http"}]}`,
		`{"results":[{"name":"x"}]}`,
		`[{"scenario":"http","name":"x"}]`,
		`{"results":[{"scenario":"http","name":"x","ops_per_sec":"fast"}]}`,
	} {
		if _, err := bench.ReadReport([]byte(in)); !errors.Is(err, bench.ErrNotAReport) {
			t.Errorf("ReadReport(%q): %v", in, err)
		}
	}
	r, err := bench.ReadReport([]byte(`{"cpus":2,"results":[{"scenario":"http","name":"x","ops_per_sec":5,"p99_ms":1.5,"values":{"k":2}}]}`))
	if err != nil || r.CPUs != 2 || len(r.Results) != 1 || r.Results[0].Rate != 5 || r.Results[0].P99 != 1.5 || r.Results[0].Values["k"] != 2 {
		t.Fatalf("ReadReport: %+v %v", r, err)
	}
}

func report(results ...bench.ReadResult) bench.Report { return bench.Report{Results: results} }

// Compare: the headline figure (the floor's share where there is one, else the
// rate), the p99, then the other figures by name; medians (the mean of the middle
// two of an even count) and ranges; lines in the after build's order, then those
// only the before build gave; a figure one side lacks has N 0.
func TestCompareLinesUpFigures(t *testing.T) {
	a := func(floor, p99, stored float64) bench.ReadResult {
		return bench.ReadResult{Scenario: "http", Name: "fn", Rate: 1000 * floor, Floor: floor, P99: p99, Values: map[string]float64{"stored_per_invocation": stored, "cpu_us": p99}}
	}
	before := []bench.Report{
		report(bench.ReadResult{Scenario: "floor", Name: "async", Rate: 100}, a(0.10, 10, 0.2), bench.ReadResult{Scenario: "old", Name: "gone", Rate: 7}),
		report(bench.ReadResult{Scenario: "floor", Name: "async", Rate: 300}, a(0.14, 14, 0.2)),
		report(bench.ReadResult{Scenario: "floor", Name: "async", Rate: 200}, a(0.12, 30, 0.2)),
	}
	after := []bench.Report{
		report(a(0.11, 9, 0.1), bench.ReadResult{Scenario: "floor", Name: "async", Rate: 150}),
		report(a(0.13, 11, 0.1), bench.ReadResult{Scenario: "floor", Name: "async", Rate: 250}),
	}
	got := bench.Compare(before, after)
	type row struct {
		line, figure string
		before       bench.Spread
		after        bench.Spread
	}
	want := []row{
		{"http/fn", "floor_ratio", bench.Spread{Median: 0.12, Min: 0.10, Max: 0.14, N: 3}, bench.Spread{Median: 0.12, Min: 0.11, Max: 0.13, N: 2}},
		{"http/fn", "p99_ms", bench.Spread{Median: 14, Min: 10, Max: 30, N: 3}, bench.Spread{Median: 10, Min: 9, Max: 11, N: 2}},
		{"http/fn", "cpu_us", bench.Spread{Median: 14, Min: 10, Max: 30, N: 3}, bench.Spread{Median: 10, Min: 9, Max: 11, N: 2}},
		{"http/fn", "stored_per_invocation", bench.Spread{Median: 0.2, Min: 0.2, Max: 0.2, N: 3}, bench.Spread{Median: 0.1, Min: 0.1, Max: 0.1, N: 2}},
		{"floor/async", "ops_per_sec", bench.Spread{Median: 200, Min: 100, Max: 300, N: 3}, bench.Spread{Median: 200, Min: 150, Max: 250, N: 2}},
		{"old/gone", "ops_per_sec", bench.Spread{Median: 7, Min: 7, Max: 7, N: 1}, bench.Spread{}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	near := func(a, b bench.Spread) bool {
		d := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
		return a.N == b.N && d(a.Median, b.Median) && d(a.Min, b.Min) && d(a.Max, b.Max)
	}
	for i, w := range want {
		g := got[i]
		if g.Scenario+"/"+g.Name != w.line || g.Figure != w.figure || !near(g.Before, w.before) || !near(g.After, w.after) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if r := got[1].Ratio(); r < 0.714 || r > 0.715 {
		t.Errorf("p99 ratio %v, want 10/14", r)
	}
	if r := got[5].Ratio(); r != 0 {
		t.Errorf("a figure the after build lacks has ratio %v, want 0", r)
	}

	var b bytes.Buffer
	if err := bench.WriteComparison(&b, got); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"÷ async floor", "12.0% (10.0%–14.0%)", "12.0% (11.0%–13.0%)",
		"p99 ms", "14 (10–30)", "0.714",
		"stored per invocation", "0.2", "0.500",
		"rate/s", "200 (100–300)", "200 (150–250)", "1.000",
		"old", "gone", "7",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the table has no %q:\n%s", s, out)
		}
	}
	if n := strings.Count(out, "http "); n != 1 {
		t.Errorf("a line's scenario is written %d times, want once (its first figure's row):\n%s", n, out)
	}
}
