package runnertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/runner"
)

// promptly bounds how long a runner may take to return once its context ends:
// far below any runner's default timeout, far above scheduling noise under -race.
const promptly = 5 * time.Second

// Run runs the conformance suite against the runner h describes.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Name == "" || h.New == nil || h.Echo == nil || h.Block == nil || h.Large == nil ||
		len(h.Secrets) == 0 || (len(h.Amplify) == 0) != h.NoTemplate {
		t.Fatal("runnertest: Harness needs Name, New, Echo, Block, Large, Secrets, and Amplify unless NoTemplate")
	}
	t.Run("Echo", func(t *testing.T) { testEcho(t, h) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, h) })
	t.Run("ResultCap", func(t *testing.T) { testResultCap(t, h) })
	t.Run("Secrets", func(t *testing.T) { testSecrets(t, h) })
	t.Run("ErrorLiterals", func(t *testing.T) { testErrorLiterals(t, h) })
	t.Run("Substitution", func(t *testing.T) { testSubstitution(t, h) })
	t.Run("FailureTable", func(t *testing.T) { testFailureTable(t, h) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, h) })
}

func newRunner(t testing.TB, h Harness, cfg Config) runner.Runner {
	t.Helper()
	cfg.Env = env()
	r := h.New(t, cfg)
	if r == nil {
		t.Fatal("runnertest: Harness.New returned nil")
	}
	return r
}

// run calls r and checks the contract every Outcome keeps.
func run(t testing.TB, h Harness, r runner.Runner, ctx context.Context, c runner.Call) runner.Outcome {
	t.Helper()
	o := r.Run(ctx, c)
	checkOutcome(t, h, o)
	if d, ok := r.(runner.Documented); ok && !o.OK() {
		if _, ok := d.Failures().Match(o.Result); !ok {
			t.Errorf("failure %.200q is no entry of the runner's failure table", o.Result)
		}
	}
	return o
}

// checkOutcome: a failure is an ERR: literal that is its Err's text, and its Err
// matches a sentinel; a success has no Err; no secret anywhere.
func checkOutcome(t testing.TB, h Harness, o runner.Outcome) {
	t.Helper()
	assertNoSecret(t, o)
	if o.OK() {
		if o.Err != nil {
			t.Errorf("success %.200q carries Err %v", o.Result, o.Err)
		}
		return
	}
	if o.Err == nil {
		t.Errorf("failure %.200q has no Err", o.Result)
		return
	}
	if o.Err.Error() != o.Result {
		t.Errorf("failure %.200q: Err text is %.200q", o.Result, o.Err.Error())
	}
	for _, s := range append(h.Sentinels, contractSentinels...) {
		if errors.Is(o.Err, s) {
			return
		}
	}
	t.Errorf("failure %.200q: Err %v matches no sentinel", o.Result, o.Err)
}

func testEcho(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{})
	args := []string{"alpha", "beta-2", "gamma3"}
	o := run(t, h, r, context.Background(), runner.Call{Row: h.Echo, Body: strings.Join(args, "|")})
	if !o.OK() || !o.Ran {
		t.Fatalf("Echo failed: %+v", o)
	}
	for _, a := range args {
		if !strings.Contains(o.Result, a) {
			t.Errorf("Result %q lacks argument %q", o.Result, a)
		}
	}
	o = run(t, h, r, context.Background(), runner.Call{Row: h.Echo, Body: strings.Join(args, "|"), Shape: true})
	if !o.OK() || o.Ran || o.Shape == nil {
		t.Fatalf("shape mode: %+v", o)
	}
	if b, _ := json.Marshal(o.Shape); string(b) != o.Result {
		t.Errorf("shape Result %s is not its Shape %s", o.Result, b)
	}
}

func testCancel(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{})
	canceled := "ERR:" + h.Name + ":canceled:"

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o, took := timed(func() runner.Outcome { return run(t, h, r, ctx, runner.Call{Row: h.Block}) })
		if o.Result != canceled+"context canceled" || !errors.Is(o.Err, runner.ErrCanceled) || took > promptly {
			t.Errorf("got %+v after %v; want %scontext canceled at once", o, took, canceled)
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var at time.Time
		var mu sync.Mutex
		time.AfterFunc(20*time.Millisecond, func() {
			mu.Lock()
			at = time.Now()
			mu.Unlock()
			cancel()
		})
		o := run(t, h, r, ctx, runner.Call{Row: h.Block})
		mu.Lock()
		late := time.Since(at)
		mu.Unlock()
		if o.Result != canceled+"context canceled" || !errors.Is(o.Err, runner.ErrCanceled) || late > promptly {
			t.Errorf("got %+v %v after cancel; want %scontext canceled promptly", o, late, canceled)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		const d = 50 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		o, took := timed(func() runner.Outcome { return run(t, h, r, ctx, runner.Call{Row: h.Block}) })
		isCancel := strings.HasPrefix(o.Result, canceled) && errors.Is(o.Err, runner.ErrCanceled)
		isTimeout := h.Timeout != nil && strings.HasPrefix(o.Result, h.TimeoutPrefix) && errors.Is(o.Err, h.Timeout)
		if (!isCancel && !isTimeout) || took > d+promptly {
			t.Errorf("got %+v after %v; want %s... or the runner's timeout promptly", o, took, canceled)
		}
	})
}

func timed(f func() runner.Outcome) (runner.Outcome, time.Duration) {
	start := time.Now()
	o := f()
	return o, time.Since(start)
}

func testResultCap(t *testing.T, h Harness) {
	for _, limit := range []int64{1000, 0} {
		r := newRunner(t, h, Config{Limits: runner.Limits{MaxResultBytes: limit}})
		if limit == 0 {
			limit = runner.DefaultMaxResultBytes
		}
		t.Run(strconv.FormatInt(limit, 10), func(t *testing.T) {
			full := strings.Repeat("x", int(limit))
			o := run(t, h, r, context.Background(), runner.Call{Row: h.Large, Body: strconv.FormatInt(limit, 10)})
			if !o.OK() || !strings.Contains(o.Result, full) {
				t.Errorf("a result at the cap: %.200q", o.Result)
			}
			o = run(t, h, r, context.Background(), runner.Call{Row: h.Large, Body: strconv.FormatInt(limit+1, 10)})
			if want := h.tooLarge(limit); o.Result != want || !errors.Is(o.Err, runner.ErrResultTooLarge) {
				t.Errorf("a result over the cap: %.200q, %v; want %s", o.Result, o.Err, want)
			}
		})
	}
}

// secretForms are the ways SecretValue can appear on a wire or in an echo of it.
func secretForms() []string {
	js, _ := json.Marshal(SecretValue)
	return []string{
		SecretValue, Marker,
		url.QueryEscape(SecretValue), url.PathEscape(SecretValue),
		base64.StdEncoding.EncodeToString([]byte(SecretValue)),
		base64.StdEncoding.EncodeToString([]byte(SecretValue + ":")),
		strings.Trim(string(js), `"`),
	}
}

// assertNoSecret looks for the secret in every field of o, Err's text and structure
// included.
func assertNoSecret(t testing.TB, o runner.Outcome) {
	t.Helper()
	shape, _ := json.Marshal(o.Shape)
	fields := []string{o.Result, string(shape), o.CredTag, fmt.Sprintf("%#v", o)}
	if o.Err != nil {
		fields = append(fields, o.Err.Error(), fmt.Sprintf("%+v", o.Err))
	}
	for _, s := range secretForms() {
		for _, f := range fields {
			if strings.Contains(f, s) {
				t.Errorf("secret leaked as %q in %.300s", s, f)
			}
		}
	}
}

func testSecrets(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{})
	for i, row := range h.Secrets {
		for _, shape := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d-%s-shape=%v", i, row.Auth, shape), func(t *testing.T) {
				// The caller's body names the variable too: it must stay a name.
				c := runner.Call{Row: row, Body: "$" + SecretVar + "|$$" + SecretVar, Shape: shape}
				o := run(t, h, r, context.Background(), c)
				if !o.OK() {
					t.Errorf("the secret row failed: %.300q", o.Result)
				}
			})
		}
	}
}

func testErrorLiterals(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{})
	for i, row := range h.Failures {
		o := run(t, h, r, context.Background(), runner.Call{Row: row, Body: "x"})
		if o.OK() {
			t.Errorf("failure row %d (%s %s) succeeded: %.200q", i, row.Key, row.Target, o.Result)
		}
	}
}

func testSubstitution(t *testing.T, h Harness) {
	if h.NoTemplate {
		t.Skip("the runner substitutes no template")
	}
	body := strings.Repeat("a", 1_000_000)
	want := "ERR:substitution_too_large:" + strconv.Itoa(runner.DefaultMaxSubstitutionBytes)
	for _, limit := range []int{0, 64 << 10} {
		r := newRunner(t, h, Config{Limits: runner.Limits{MaxSubstitutionBytes: limit}})
		if limit != 0 {
			want = "ERR:substitution_too_large:" + strconv.Itoa(limit)
		}
		for i, row := range h.Amplify {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			o, took := timed(func() runner.Outcome { return run(t, h, r, context.Background(), runner.Call{Row: row, Body: body}) })
			runtime.ReadMemStats(&after)
			if o.Result != want || !errors.Is(o.Err, runner.ErrSubstitutionTooLarge) || o.Ran {
				t.Errorf("row %d, limit %d: got %.200q ran=%v; want %s", i, limit, o.Result, o.Ran, want)
			}
			// The build stays under twice the limit; leave room for the runner's
			// own allocations and the servers of the harness.
			alloc := after.TotalAlloc - before.TotalAlloc
			if bound := uint64(4 * runner.DefaultMaxSubstitutionBytes); alloc > bound || took > promptly {
				t.Errorf("row %d, limit %d: allocated %d bytes in %v, want at most %d promptly", i, limit, alloc, took, bound)
			}
		}
	}
}

func testConcurrent(t *testing.T, h Harness) {
	r := newRunner(t, h, Config{Limits: runner.Limits{MaxResultBytes: 4096}})
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, b := fmt.Sprintf("call%d-a", i), fmt.Sprintf("call%d-b", i)
			o := run(t, h, r, context.Background(), runner.Call{Row: h.Echo, Body: a + "|" + b})
			if !o.OK() || !strings.Contains(o.Result, a) || !strings.Contains(o.Result, b) {
				t.Errorf("call %d: %.200q", i, o.Result)
			}
			size := 4000 + 20*i // over the cap from i = 5
			o = run(t, h, r, context.Background(), runner.Call{Row: h.Large, Body: strconv.Itoa(size)})
			if o.OK() != (size <= 4096) {
				t.Errorf("call %d, %d bytes: %.200q", i, size, o.Result)
			}
			run(t, h, r, context.Background(), runner.Call{Row: h.Secrets[i%len(h.Secrets)], Shape: i%2 == 0})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			if o := run(t, h, r, ctx, runner.Call{Row: h.Block}); o.OK() {
				t.Errorf("call %d: Block succeeded: %.200q", i, o.Result)
			}
		}()
	}
	wg.Wait()
}
