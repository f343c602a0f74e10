package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/capdir/capdir/internal/bench"
)

// maxBenchRounds bounds --rounds: twenty full runs of each binary take hours.
const maxBenchRounds = 20

// maxBenchOutput bounds what one run may print: a full run's JSON is about 13 KB.
const maxBenchOutput = 16 << 20

// runBenchCompare runs `bench --json` of the binary c.Against (before) and of
// this one (after), c.Rounds times each, alternately and each as its own process
// (the order swapped every round, so that a drift in the machine's load falls on
// both alike), and prints every figure's median and range for each, and after ÷
// before. The scenario flags go to both; syncSet says whether --sync was given.
func runBenchCompare(ctx context.Context, c benchConfig, syncSet bool) error {
	if c.CPUProfile != "" {
		return errors.New("--cpuprofile profiles this process, and with --against each run is a process of its own: profile one binary at a time, without --against")
	}
	if c.Rounds < 1 || c.Rounds > maxBenchRounds {
		return fmt.Errorf("--rounds %d: give 1 to %d", c.Rounds, maxBenchRounds)
	}
	against, err := exec.LookPath(c.Against)
	if err != nil {
		return fmt.Errorf("--against %s: %w: give the path of another capdir binary (go build -o capdir-before ./cmd/capdir at the earlier commit)", c.Against, err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("this binary's path, to run it beside --against: %w", err)
	}
	args := []string{"bench", "--json"}
	if c.Bench.Quick {
		args = append(args, "--quick")
	}
	if len(c.Bench.Only) > 0 {
		args = append(args, "--only", strings.Join(c.Bench.Only, ","))
	}
	if syncSet {
		args = append(args, "--sync", c.Bench.Sync)
	}
	if c.Bench.Workers != 0 {
		args = append(args, "--workers", strconv.Itoa(c.Bench.Workers))
	}
	if c.Bench.Dir != "" {
		args = append(args, "--dir", c.Bench.Dir)
	}
	type side struct {
		which, bin string
		runs       []bench.Report
	}
	before, after := &side{which: "before", bin: against}, &side{which: "after", bin: self}
	start := time.Now()
	for i := range c.Rounds {
		order := []*side{before, after}
		if i%2 == 1 {
			order[0], order[1] = after, before
		}
		for _, s := range order {
			if !c.JSON {
				fmt.Fprintf(c.Err, "bench: round %d of %d, %s: %s %s\n", i+1, c.Rounds, s.which, s.bin, strings.Join(args, " "))
			}
			r, err := runBenchBinary(ctx, s.bin, args)
			if err != nil {
				return fmt.Errorf("round %d of %d, %s: %w", i+1, c.Rounds, s.which, err)
			}
			s.runs = append(s.runs, r)
		}
	}
	rows := bench.Compare(before.runs, after.runs)
	if c.JSON {
		enc := json.NewEncoder(c.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"before": map[string]any{"binary": before.bin, "runs": before.runs},
			"after":  map[string]any{"binary": after.bin, "runs": after.runs},
			"args":   args, "rounds": c.Rounds, "seconds": time.Since(start).Seconds(), "rows": rows,
		})
	}
	fmt.Fprintf(c.Out, "capdir bench: %s (before) against %s (after), %d run%s of each, alternated, %s; medians (range)\n\n",
		before.bin, after.bin, c.Rounds, map[bool]string{true: "s"}[c.Rounds > 1], time.Since(start).Round(100*time.Millisecond))
	return bench.WriteComparison(c.Out, rows)
}

// runBenchBinary runs bin with args (`bench --json ...`) and reads its report.
func runBenchBinary(ctx context.Context, bin string, args []string) (bench.Report, error) {
	var stdout, stderr boundedBuffer
	stdout.limit, stderr.limit, stderr.keepTail = maxBenchOutput, 4<<10, true
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Interrupted, a run is asked to stop as capdir bench stops on ^C (its
	// temporary directories removed), and killed if it has not within WaitDelay.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return bench.Report{}, ctx.Err()
		}
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			return bench.Report{}, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, tail)
		}
		return bench.Report{}, fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	if stdout.over {
		return bench.Report{}, fmt.Errorf("%s %s printed more than %d MiB: is it a capdir binary?", bin, strings.Join(args, " "), maxBenchOutput>>20)
	}
	r, err := bench.ReadReport(stdout.Bytes())
	if err != nil {
		return bench.Report{}, fmt.Errorf("%s %s printed %w: is it a capdir binary with bench --json?", bin, strings.Join(args, " "), err)
	}
	return r, nil
}

// boundedBuffer keeps at most limit bytes of what is written to it: the first
// ones, or with keepTail the last ones. It never fails a write, so the process
// writing is not stopped by a full pipe. Its buffer is a field, not embedded:
// an embedded bytes.Buffer's ReadFrom, which io.Copy prefers to Write, would
// take everything.
type boundedBuffer struct {
	buf      bytes.Buffer
	limit    int
	keepTail bool
	over     bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if b.keepTail {
		b.buf.Write(p)
		if extra := b.buf.Len() - b.limit; extra > 0 {
			b.buf.Next(extra)
			b.over = true
		}
		return n, nil
	}
	if room := b.limit - b.buf.Len(); room < len(p) {
		p = p[:max(room, 0)]
		b.over = true
	}
	b.buf.Write(p)
	return n, nil
}

func (b *boundedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *boundedBuffer) String() string { return b.buf.String() }
