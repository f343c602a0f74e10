package ask_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/bench"
	"github.com/capdir/capdir/projector/ask"
)

// built is an index over 100,000 rows, built once per process for every run of a
// benchmark, with what building it cost.
type built struct {
	x         *ask.Index
	buildTime time.Duration
	buildCPU  time.Duration // the process's CPU time while building
	heap      uint64        // heap in use after building, less before, both after a GC
}

// cpuTime is the CPU time this process has used: on a machine shared with other
// work, a figure that load does not inflate as it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	builtOnce = map[string]*sync.Once{"docstrings": {}, "bench-rows": {}}
	builtIdx  = map[string]*built{}
)

func build(b *testing.B, name string, rows func() []contract.Row) *built {
	builtOnce[name].Do(func() {
		rs := rows()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start, cpu := time.Now(), cpuTime()
		x := ask.New()
		for i := range rs {
			x.Put(&rs[i])
		}
		el, elCPU := time.Since(start), cpuTime()-cpu
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(rs)
		builtIdx[name] = &built{x: x, buildTime: el, buildCPU: elCPU, heap: after.HeapAlloc - before.HeapAlloc}
	})
	return builtIdx[name]
}

// benchRows are internal/bench's generated directory (the rows capdir bench
// imports): keys such as WEATHER_GET_CITY_00042 whose WHAT repeats the key's words,
// a vocabulary of 26 words, so every posting list holds a tenth of the rows or more.
func benchRows() []contract.Row {
	nd, _ := bench.DirectoryRows("", 100_000)
	var rows []contract.Row
	sc := bufio.NewScanner(bytes.NewReader(nd))
	for sc.Scan() {
		var r contract.Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			panic(err)
		}
		r.Enabled, r.PlannerRank = 1, 100 // what the import gives a row that omits them
		rows = append(rows, r)
	}
	return rows
}

// BenchmarkAsk100k searches 100,000 rows: rows generated with a docstring of every
// tag (genRows: about 30 distinct words a row out of 400), the same searched by a
// token holder whose scope is three categories, and internal/bench's directory rows.
// Each op is one ask, taken in turn from a mix of specific and very common words.
// Reported besides ns/op: the process's CPU time per ask (which load on a shared
// machine does not inflate), the median and 99th percentile of one ask, the index's
// heap (after a GC, less the heap before building) and its build time, wall and
// CPU.
func BenchmarkAsk100k(b *testing.B) {
	mixed := []string{
		"current temperature at a coordinate", "list the models", "send a message to slack",
		"weather forecast for a city", "invoice payment status", "what time is it",
		"latest api usage", "from the api", "convert currency rate", "github release commit history",
	}
	scope := map[string]bool{"weather": true, "invoice": true, "geocode": true}
	for _, c := range []struct {
		name, rows string
		asks       []string
		visible    func(key, category string) bool
	}{
		{"docstrings", "docstrings", mixed, nil},
		{"docstrings-scoped", "docstrings", mixed, func(_, category string) bool { return scope[category] }},
		{"bench-rows", "bench-rows", []string{"weather get city", "invoice list account status", "search export summary", "deploy check region usage", "weather"}, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			gen := func() []contract.Row { return genRows(1, 100_000) }
			if c.rows == "bench-rows" {
				gen = benchRows
			}
			bt := build(b, c.rows, gen)
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			cpu := cpuTime()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				a, err := bt.x.Search(ask.Query{Text: c.asks[i%len(c.asks)], Visible: c.visible})
				lat = append(lat, time.Since(start))
				if err != nil || a.Total == 0 {
					b.Fatalf("ask %q: %v, total %d", c.asks[i%len(c.asks)], err, a.Total)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(len(lat)), "cpu-ns/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(bt.heap)/(1<<20), "index-MB")
			b.ReportMetric(bt.buildTime.Seconds(), "build-s")
			b.ReportMetric(bt.buildCPU.Seconds(), "build-cpu-s")
		})
	}
}
