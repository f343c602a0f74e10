package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/bench"
)

// fakeBenchEnv, when set in a process of this test binary, makes it a stand-in
// for a capdir binary's `bench --json` (see fakeBench): its value is the file each
// run appends its name and arguments to.
const fakeBenchEnv = "CAPDIR_TEST_FAKE_BENCH"

func TestMain(m *testing.M) {
	if log := os.Getenv(fakeBenchEnv); log != "" {
		os.Exit(fakeBench(log))
	}
	os.Exit(m.Run())
}

// fakeBench acts as `capdir bench --json` would, by the name it was run under:
// "failing" fails as a run does, "garbage" prints what no capdir prints, "before"
// prints a report whose figures are 100 plus the number of runs before it, any
// other name (this test binary's own, for the after side) 120 plus that number.
func fakeBench(log string) int {
	name := filepath.Base(os.Args[0])
	prior, _ := os.ReadFile(log)
	runs := strings.Count(string(prior), "\n")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintln(f, name, strings.Join(os.Args[1:], " "))
	f.Close()
	switch name {
	case "slow":
		// Runs until interrupted, as a long run would, and says it was.
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt)
		select {
		case <-stop:
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, "slow interrupted")
				f.Close()
			}
			return 1
		case <-time.After(time.Minute):
			return 0
		}
	case "failing":
		fmt.Fprintln(os.Stderr, "capdir: bench: the store is full")
		return 1
	case "garbage":
		fmt.Println("hello")
		return 0
	case "noisy":
		// A failing run that said much before its reason.
		for i := range 2000 {
			fmt.Fprintf(os.Stderr, "bench: progress line %d of a long run\n", i)
		}
		fmt.Fprintln(os.Stderr, "capdir: bench: the real reason")
		return 1
	case "huge":
		// More than a run may print, the start of it a report.
		w := bufio.NewWriter(os.Stdout)
		w.WriteString(`{"results":[{"scenario":"floor","name":"x","note":"`)
		for range (maxBenchOutput >> 10) + 1 {
			w.WriteString(strings.Repeat("x", 1<<10))
		}
		w.WriteString(`"}]}`)
		w.Flush()
		return 0
	}
	base := 120.0
	if name == "before" {
		base = 100
	}
	v := base + float64(runs)
	fmt.Printf(`{"cpus":2,"go":"go","sync":"1s","quick":true,"seconds":1,"results":[
{"scenario":"floor","name":"JetStream async publish, %d B","ops":10,"unit":"publish","seconds":1,"ops_per_sec":%g},
{"scenario":"http","name":"fn via POST /api/dispatch, 64 in flight","ops":10,"unit":"invocation","seconds":1,"ops_per_sec":%g,"floor_ratio":%g,"p99_ms":%g,"values":{"stored_per_invocation":0.2}}]}`+"\n",
		282+runs%2, 1000*v, 10*v, v/1000, v/10)
	return 0
}

// fakeBinaries links this test binary under the names fakeBench acts by, and
// sets the log its runs append to.
func fakeBinaries(t *testing.T) (dir, log string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for _, name := range []string{"before", "failing", "garbage", "slow", "huge", "noisy"} {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	log = filepath.Join(t.TempDir(), "runs")
	t.Setenv(fakeBenchEnv, log)
	return dir, log
}

// capdir bench --against runs the other binary and this one alternately, each
// as its own process with the scenario flags, and compares every figure.
func TestBenchAgainstAnotherBinary(t *testing.T) {
	dir, log := fakeBinaries(t)
	out, errOut, err := runCLI(t, "", "bench", "--against", filepath.Join(dir, "before"), "--rounds", "3",
		"--quick", "--only", "floor,http", "--workers", "7", "--sync", "always")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, errOut)
	}
	runs, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Base(os.Args[0])
	args := "bench --json --quick --only floor,http --sync always --workers 7"
	var want []string
	for _, name := range []string{"before", self, self, "before", "before", self} {
		want = append(want, name+" "+args)
	}
	if got := strings.Split(strings.TrimSpace(string(runs)), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("runs, in order:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// before ran as runs 0, 3 and 4 (figures 100, 103, 104: median 103, range
	// 100–104), after as 1, 2 and 5 (121, 122, 125: median 122).
	table := strings.Join(strings.Fields(out), " ")
	for _, line := range []string{
		"fn via POST /api/dispatch, 64 in flight ÷ async floor 10.3% (10.0%–10.4%) 12.2% (12.1%–12.5%) 1.184",
		"p99 ms 10.3 (10–10.4) 12.2 (12.1–12.5) 1.184",
		"stored per invocation 0.2 0.2 1.000",
		// The floor named with its event's size, which differs from run to run,
		// as versions before FloorAsyncName named it: one line all the same.
		"JetStream async publish of a request event rate/s 103000 (100000–104000) 122000 (121000–125000) 1.184",
	} {
		if !strings.Contains(table, line) {
			t.Errorf("the table has no %q:\n%s", line, out)
		}
	}
	if !strings.Contains(errOut, "round 2 of 3, after: ") {
		t.Errorf("no progress on stderr: %q", errOut)
	}

	out, _, err = runCLI(t, "", "bench", "--against", filepath.Join(dir, "before"), "--rounds", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rounds int              `json:"rounds"`
		Rows   []bench.Compared `json:"rows"`
		Before struct {
			Runs []bench.Report `json:"runs"`
		} `json:"before"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Rounds != 2 || len(got.Before.Runs) != 2 || len(got.Rows) != 4 || got.Rows[1].Figure != "floor_ratio" ||
		got.Rows[1].Before.N != 2 || got.Rows[1].After.N != 2 {
		t.Fatalf("JSON: %+v", got)
	}
}

// What --against refuses, and a run that fails or prints what no capdir prints:
// an error saying which round and binary, with what it said.
func TestBenchAgainstRefusals(t *testing.T) {
	dir, log := fakeBinaries(t)
	for _, c := range []struct {
		args []string
		want string
		runs bool // whether the other binary is run
	}{
		{[]string{"--against", filepath.Join(dir, "missing")}, "give the path of another capdir binary", false},
		{[]string{"--against", filepath.Join(dir, "before"), "--rounds", "0"}, "--rounds 0: give 1 to 20", false},
		{[]string{"--against", filepath.Join(dir, "before"), "--rounds", "21"}, "--rounds 21: give 1 to 20", false},
		{[]string{"--against", filepath.Join(dir, "before"), "--cpuprofile", filepath.Join(dir, "p")}, "profile one binary at a time", false},
		{[]string{"--rounds", "2"}, "--rounds counts the runs of --against", false},
		{[]string{"--against", filepath.Join(dir, "failing"), "--rounds", "1"}, "round 1 of 1, before: " + filepath.Join(dir, "failing") +
			" bench --json: exit status 1: capdir: bench: the store is full", true},
		{[]string{"--against", filepath.Join(dir, "garbage"), "--rounds", "1"}, "printed not the JSON capdir bench --json prints", true},
		{[]string{"--against", filepath.Join(dir, "huge"), "--rounds", "1"}, "printed more than 16 MiB: is it a capdir binary?", true},
		{[]string{"--against", filepath.Join(dir, "noisy"), "--rounds", "1"}, "progress line 1999 of a long run\ncapdir: bench: the real reason", true},
	} {
		os.Remove(log)
		_, _, err := runCLI(t, "", append([]string{"bench"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench %v: %v, want an error with %q", c.args, err, c.want)
		}
		if err != nil && len(err.Error()) > 5<<10 {
			t.Errorf("bench %v: an error of %d bytes; a run's stderr is kept to its last 4 KiB", c.args, len(err.Error()))
		}
		if runs, _ := os.ReadFile(log); c.runs != (len(runs) != 0) {
			t.Errorf("bench %v ran %q", c.args, runs)
		}
	}
}

// An interrupted comparison asks the run in progress to stop (capdir bench
// removes its temporary directories when interrupted), and returns.
func TestBenchAgainstInterruptedStopsTheRun(t *testing.T) {
	dir, log := fakeBinaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	var out, errb strings.Builder
	start := time.Now()
	err := runBenchCompare(ctx, benchConfig{Against: filepath.Join(dir, "slow"), Rounds: 1, Out: &out, Err: &errb}, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 9*time.Second {
		t.Errorf("returned after %v: the run was killed, not asked to stop", el)
	}
	runs, _ := os.ReadFile(log)
	if !strings.Contains(string(runs), "slow interrupted") {
		t.Errorf("the run was not interrupted: %q", runs)
	}
}
