package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DirectoryRows returns n generated rows as NDJSON, in shuffled key order, and their
// keys. Keys look like WEATHER_GET_CITY_00042: words from small vocabularies, so
// did_you_mean has many near neighbours to rank.
func DirectoryRows(prefix string, n int) ([]byte, []string) {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	domains := []string{"WEATHER", "INVOICE", "SEARCH", "DEPLOY", "LOOKUP", "CUSTOMER", "ORDER", "TICKET", "METRIC", "REPORT"}
	verbs := []string{"GET", "LIST", "SYNC", "CHECK", "CREATE", "CLOSE", "EXPORT", "COUNT"}
	nouns := []string{"CITY", "ACCOUNT", "REGION", "STATUS", "HISTORY", "SUMMARY", "DETAIL", "USAGE"}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s%s_%s_%s_%05d", prefix, domains[rng.IntN(len(domains))], verbs[rng.IntN(len(verbs))], nouns[rng.IntN(len(nouns))], i)
	}
	rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, k := range keys {
		row := map[string]any{"key": k, "type": "fn", "target": "echo", "category": strings.ToLower(k[:strings.IndexByte(k, '_')]),
			"content": "# WHAT: " + strings.ToLower(strings.ReplaceAll(k, "_", " ")) + "\n# ARGS: $1=text\n# EX: [" + k + "]hello[/" + k + "]"}
		if i%10 == 0 {
			row["type"], row["target"] = "http", "GET https://api.example.com/v1/"+strings.ToLower(k)+"?q=$1"
		}
		enc.Encode(row)
	}
	return buf.Bytes(), keys
}

// Import posts NDJSON rows to POST /api/directory/import and checks that all of
// them were written.
func (e *Env) Import(ctx context.Context, ndjson []byte, want int) error {
	status, out, err := e.Do(ctx, "POST", "/api/directory/import", "application/x-ndjson", ndjson)
	if err != nil {
		return err
	}
	var res struct {
		OK     int               `json:"ok"`
		Failed []json.RawMessage `json:"failed"`
	}
	if status != http.StatusOK || json.Unmarshal(out, &res) != nil || res.OK != want {
		if len(out) > 500 {
			out = out[:500]
		}
		return fmt.Errorf("bench: import: status %d, %s", status, out)
	}
	return nil
}

// Directory imports n generated rows into a fresh node, then times row lookups,
// unknown-key dispatches (with did_you_mean) and reads the resident memory.
func Directory(ctx context.Context, e *Env, n, lookups int, budget time.Duration) ([]Result, error) {
	warm, _ := DirectoryRows("WARM_", 500)
	if err := e.Import(ctx, warm, 500); err != nil {
		return nil, err
	}
	before := ReadRSS()
	body, keys := DirectoryRows("", n)
	start := time.Now()
	if err := e.Import(ctx, body, n); err != nil {
		return nil, err
	}
	el := time.Since(start)
	imp := rateResult(ScenarioDirectory, fmt.Sprintf("import %d rows (POST /api/directory/import, NDJSON %.0f MB)", n, float64(len(body))/(1<<20)), "rows", n, el, nil)
	imp.Note = fmt.Sprintf("%.2f s", el.Seconds())
	imp.Values = map[string]float64{"import_seconds": el.Seconds()}
	body = nil

	get := func(ctx context.Context, i int) error {
		k := keys[(i*7919)%len(keys)]
		status, out, err := e.Do(ctx, "GET", "/api/directory/"+k, "", nil)
		if err == nil && (status != http.StatusOK || !bytes.Contains(out, []byte(k))) {
			err = fmt.Errorf("bench: GET %s: %d %s", k, status, out)
		}
		return err
	}
	unknown := func(ctx context.Context, i int) error {
		k := typo(keys[(i*104729)%len(keys)])
		out, err := e.Dispatch(ctx, k, "x", http.StatusNotFound)
		if err == nil && !bytes.Contains(out, []byte(`"did_you_mean":["`)) {
			err = fmt.Errorf("bench: unknown key %s: no suggestions in %s", k, out)
		}
		return err
	}
	var out []Result
	out = append(out, imp)
	for _, c := range []struct {
		name string
		op   Op
	}{{"GET /api/directory/{key}", get}, {"unknown-key dispatch with did_you_mean", unknown}} {
		if err := warmup(ctx, max(50, lookups/10), 1, c.op); err != nil {
			return nil, err
		}
		lat, el, err := Drive(ctx, lookups, 1, budget, c.op)
		if err != nil {
			return nil, err
		}
		out = append(out, rateResult(ScenarioDirectory, c.name+fmt.Sprintf(", %d rows", n+500), "requests", len(lat), el, lat))
	}
	after := ReadRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mem := Result{Scenario: ScenarioDirectory, Name: fmt.Sprintf("resident memory with %d rows (after GC)", n+500), Unit: "bytes",
		Note:   fmt.Sprintf("VmRSS %.0f MB (%.0f MB before the import); Go heap in use %.0f MB", mb(after), mb(before), mb(float64(ms.HeapInuse))),
		Values: map[string]float64{"rss_mb": mb(after), "rss_before_mb": mb(before), "heap_inuse_mb": mb(float64(ms.HeapInuse))}}
	out = append(out, mem)
	return out, nil
}

func mb(b float64) float64 { return b / (1 << 20) }

// typo swaps two adjacent letters of the key's second word, a near miss did_you_mean
// must find.
func typo(k string) string {
	i := strings.IndexByte(k, '_') + 1
	b := []byte(k)
	b[i], b[i+1] = b[i+1], b[i]
	return string(b)
}

// ReadRSS forces a garbage collection, returns freed memory to the OS, and reads
// this process's VmRSS in bytes from /proc/self/status (0 where there is none).
func ReadRSS() float64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// CPUTime is the user plus system CPU time this process has used so far (0 where
// getrusage is not available). On a shared machine, CPU per operation is steadier
// than wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
