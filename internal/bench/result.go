package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is one measured line.
type Result struct {
	// Scenario is the scenario that produced the line (see Scenarios); Name says
	// what was measured, e.g. "fn via POST /api/dispatch, 64 in flight".
	Scenario string `json:"scenario"`
	Name     string `json:"name"`
	// Ops is how many operations were measured (warm-up excluded), Unit what one is.
	Ops     int     `json:"ops"`
	Unit    string  `json:"unit"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"ops_per_sec"`
	// Latency percentiles, when each operation was timed.
	P50 time.Duration `json:"-"`
	P90 time.Duration `json:"-"`
	P99 time.Duration `json:"-"`
	// Floor is Rate ÷ the raw async publish rate of the same run, when it applies.
	Floor float64 `json:"floor_ratio,omitempty"`
	// Note carries figures that are not a rate: added latency, memory, import time.
	Note string `json:"note,omitempty"`
	// Values holds the Note's figures for machines (e.g. "rss_mb").
	Values map[string]float64 `json:"values,omitempty"`
}

// MarshalJSON writes the latencies in milliseconds.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		P50 float64 `json:"p50_ms,omitempty"`
		P90 float64 `json:"p90_ms,omitempty"`
		P99 float64 `json:"p99_ms,omitempty"`
	}{plain(r), ms(r.P50), ms(r.P90), ms(r.P99)})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Latencies summarises per-operation durations.
type Latencies struct {
	P50, P90, P99, Max time.Duration
}

// Summarize sorts lat in place and returns its percentiles (nearest rank).
func Summarize(lat []time.Duration) Latencies {
	if len(lat) == 0 {
		return Latencies{}
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(lat))+0.5) - 1
		return lat[max(0, min(i, len(lat)-1))]
	}
	return Latencies{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: lat[len(lat)-1]}
}

func rateResult(scenario, name, unit string, ops int, el time.Duration, lat []time.Duration) Result {
	r := Result{Scenario: scenario, Name: name, Unit: unit, Ops: ops, Seconds: el.Seconds()}
	if el > 0 {
		r.Rate = float64(ops) / el.Seconds()
	}
	if len(lat) > 0 {
		l := Summarize(lat)
		r.P50, r.P90, r.P99 = l.P50, l.P90, l.P99
	}
	return r
}

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmeasure\tops\trate/s\tp50 ms\tp90 ms\tp99 ms\t÷ async floor\t\tnotes")
	for _, r := range results {
		rate := "-"
		if r.Rate > 0 {
			rate = fmt.Sprintf("%.0f", r.Rate)
		}
		floor := "-"
		if r.Floor > 0 {
			floor = fmt.Sprintf("%.1f%%", 100*r.Floor)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\t%s\n", r.Scenario, r.Name, r.Ops, rate,
			msCell(r.P50), msCell(r.P90), msCell(r.P99), floor, r.Note)
	}
	return tw.Flush()
}

func msCell(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", ms(d)), "0"), ".")
}

// noteRatio notes r's rate as a ratio to base's, measured interleaved with it
// (Paired): "<ratio>× <than>, interleaved", and the ratio as Values[key]. A
// base without a rate notes nothing.
func (r *Result) noteRatio(base Result, than, key string) {
	if base.Rate <= 0 {
		return
	}
	ratio := r.Rate / base.Rate
	r.Note = fmt.Sprintf("%.2f× %s, interleaved", ratio, than)
	r.Values = map[string]float64{key: ratio}
}
