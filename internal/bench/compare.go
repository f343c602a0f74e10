package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is what `capdir bench --json` prints, as another build's run is read
// back to be compared with this one's.
type Report struct {
	CPUs    int          `json:"cpus"`
	Go      string       `json:"go"`
	Sync    string       `json:"sync"`
	Quick   bool         `json:"quick"`
	Seconds float64      `json:"seconds"`
	Results []ReadResult `json:"results"`
}

// ReadResult is one line of a Report: a Result as its JSON holds it.
type ReadResult struct {
	Scenario string             `json:"scenario"`
	Name     string             `json:"name"`
	Rate     float64            `json:"ops_per_sec"`
	Floor    float64            `json:"floor_ratio"`
	P50      float64            `json:"p50_ms"`
	P99      float64            `json:"p99_ms"`
	Values   map[string]float64 `json:"values"`
}

// ErrNotAReport is output that is not what `capdir bench --json` prints.
var ErrNotAReport = errors.New("not the JSON capdir bench --json prints")

// ReadReport reads what `capdir bench --json` printed: one JSON object with at
// least one result, each naming its scenario and what it measured.
func ReadReport(b []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("%w: %v", ErrNotAReport, err)
	}
	if len(r.Results) == 0 {
		return Report{}, fmt.Errorf("%w: no results", ErrNotAReport)
	}
	for i, res := range r.Results {
		if res.Scenario == "" || res.Name == "" {
			return Report{}, fmt.Errorf("%w: result %d names no scenario or measure", ErrNotAReport, i+1)
		}
	}
	return r, nil
}

// Spread is one figure over several runs: its median (the mean of the middle two
// of an even count), least and greatest, and how many runs gave it.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	m := v[n/2]
	if n%2 == 0 {
		m = (v[n/2-1] + v[n/2]) / 2
	}
	return Spread{Median: m, Min: v[0], Max: v[n-1], N: n}
}

// Compared is one figure of one measured line, over the runs of two builds.
type Compared struct {
	Scenario string `json:"scenario"`
	Name     string `json:"name"`
	// Figure is the figure's JSON name: floor_ratio, ops_per_sec, p99_ms, or a
	// key of the result's values (stored_per_invocation, http_ratio, ...).
	Figure string `json:"figure"`
	Before Spread `json:"before"`
	After  Spread `json:"after"`
}

// Ratio is the after median ÷ the before median, 0 when either is missing.
func (c Compared) Ratio() float64 {
	if c.Before.N == 0 || c.After.N == 0 || c.Before.Median == 0 {
		return 0
	}
	return c.After.Median / c.Before.Median
}

// Compare lines the runs of two builds up, measure by measure: the lines in
// the order the after build's first run gives them (then any only the before
// build gave), and for each its headline figure (the share of the async floor
// where it has one, else its rate), its p99 where it was timed, and its other
// figures. A figure one build did not give has a Spread of N 0.
func Compare(before, after []Report) []Compared {
	type line struct{ scenario, name string }
	var order []line
	seen := map[line]bool{}
	add := func(reports []Report) {
		for _, r := range reports {
			for _, res := range r.Results {
				l := line{res.Scenario, lineName(res)}
				if !seen[l] {
					seen[l] = true
					order = append(order, l)
				}
			}
		}
	}
	add(after)
	add(before)
	collect := func(reports []Report, l line) map[string][]float64 {
		got := map[string][]float64{}
		for _, r := range reports {
			for _, res := range r.Results {
				if res.Scenario != l.scenario || lineName(res) != l.name {
					continue
				}
				if res.Floor > 0 {
					got["floor_ratio"] = append(got["floor_ratio"], res.Floor)
				}
				if res.Rate > 0 {
					got["ops_per_sec"] = append(got["ops_per_sec"], res.Rate)
				}
				if res.P99 > 0 {
					got["p99_ms"] = append(got["p99_ms"], res.P99)
				}
				for k, v := range res.Values {
					if !math.IsNaN(v) && !math.IsInf(v, 0) {
						got[k] = append(got[k], v)
					}
				}
			}
		}
		return got
	}
	var out []Compared
	for _, l := range order {
		b, a := collect(before, l), collect(after, l)
		has := func(k string) bool { return len(b[k]) > 0 || len(a[k]) > 0 }
		var figures []string
		if has("floor_ratio") {
			figures = append(figures, "floor_ratio")
		} else if has("ops_per_sec") {
			figures = append(figures, "ops_per_sec")
		}
		if has("p99_ms") {
			figures = append(figures, "p99_ms")
		}
		var rest []string
		for _, m := range []map[string][]float64{b, a} {
			for k := range m {
				if k != "floor_ratio" && k != "ops_per_sec" && k != "p99_ms" && !slices.Contains(rest, k) {
					rest = append(rest, k)
				}
			}
		}
		sort.Strings(rest)
		for _, f := range append(figures, rest...) {
			out = append(out, Compared{Scenario: l.scenario, Name: l.name, Figure: f, Before: spreadOf(b[f]), After: spreadOf(a[f])})
		}
	}
	return out
}

// earlierFloorName is how versions before FloorAsyncName named the floor's
// rows: with the event's size, which varies by a byte or two from run to run.
var earlierFloorName = regexp.MustCompile(`^JetStream (async|sync) publish, [0-9]+ B$`)

// lineName is the name res's line is compared under: its own, or for a floor
// row an earlier version wrote, the name this version gives it.
func lineName(res ReadResult) string {
	if m := earlierFloorName.FindStringSubmatch(res.Name); res.Scenario == ScenarioFloor && m != nil {
		if m[1] == "async" {
			return FloorAsyncName
		}
		return FloorSyncName
	}
	return res.Name
}

// WriteComparison prints rows as an aligned table: each figure's median and
// range for the before and the after build, and after ÷ before.
func WriteComparison(w io.Writer, rows []Compared) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmeasure\tfigure\tbefore\tafter\tafter ÷ before")
	var last string
	for _, r := range rows {
		scenario, name := r.Scenario, r.Name
		if key := r.Scenario + "\x00" + r.Name; key == last {
			scenario, name = "", ""
		} else {
			last = key
		}
		ratio := "-"
		if x := r.Ratio(); x != 0 {
			ratio = strconv.FormatFloat(x, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", scenario, name, figureLabel(r.Figure),
			formatSpread(r.Figure, r.Before), formatSpread(r.Figure, r.After), ratio)
	}
	return tw.Flush()
}

// figureLabel is how the table names a figure.
func figureLabel(f string) string {
	switch f {
	case "floor_ratio":
		return "÷ async floor"
	case "ops_per_sec":
		return "rate/s"
	case "p99_ms":
		return "p99 ms"
	}
	return strings.ReplaceAll(f, "_", " ")
}

// formatSpread writes a figure's median and, when the runs differ, its range.
func formatSpread(f string, s Spread) string {
	if s.N == 0 {
		return "-"
	}
	one := func(v float64) string {
		switch {
		case f == "floor_ratio":
			return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
		case strings.HasSuffix(f, "_ratio"):
			return strconv.FormatFloat(v, 'f', 2, 64) + "×"
		case f == "ops_per_sec" || math.Abs(v) >= 100:
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	if s.N == 1 || s.Min == s.Max {
		return one(s.Median)
	}
	return one(s.Median) + " (" + one(s.Min) + "–" + one(s.Max) + ")"
}
