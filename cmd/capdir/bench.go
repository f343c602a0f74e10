package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/bench"
	"github.com/spf13/cobra"
)

func init() { register(benchCmd) }

// benchConfig is what capdir bench runs.
type benchConfig struct {
	Bench      bench.Config
	JSON       bool   // machine-readable JSON instead of a table
	CPUProfile string // a file for a CPU profile of the whole run
	// Against is another capdir binary to compare this one with (see
	// runBenchCompare), Rounds how many runs of each.
	Against  string
	Rounds   int
	Out, Err io.Writer
}

func benchCmd() *cobra.Command {
	var cfg benchConfig
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure capdir on this machine: " + strings.Join(bench.Scenarios, ", "),
		Long: "Measure capdir on this machine against an embedded server in a temporary directory:\n" +
			scenarioHelp() + "Throughput rows show their share of the async publish floor of the same run.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			cfg.Out, cfg.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if cfg.Against != "" {
				return runBenchCompare(ctx, cfg, cmd.Flags().Changed("sync"))
			}
			if cmd.Flags().Changed("rounds") {
				return errors.New("--rounds counts the runs of --against: give --against too, or leave --rounds out")
			}
			return runBench(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Bench.Quick, "quick", false, "smaller counts: the whole run takes under a minute")
	f.BoolVar(&cfg.JSON, "json", false, "print machine-readable JSON instead of a table")
	f.StringVar(&cfg.Bench.Sync, "sync", eventlog.DefaultSync, `the log's fsync policy: "always" or an interval such as 1s`)
	f.IntVar(&cfg.Bench.Workers, "workers", 0, "dispatcher workers of the benchmarked node (0: the serve default)")
	f.StringSliceVar(&cfg.Bench.Only, "only", nil, "run only these scenarios: "+strings.Join(bench.Scenarios, ", "))
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (use with --only)")
	f.StringVar(&cfg.Bench.Dir, "dir", "", "where to make the temporary data directories (the system temp dir when empty)")
	f.StringVar(&cfg.Against, "against", "", "another capdir binary (an earlier build, say) to run alternately with this one, each as its own process, and compare: medians and ranges of each figure")
	f.IntVar(&cfg.Rounds, "rounds", 3, "with --against: how many runs of each binary (1 to 20)")
	return cmd
}

// scenarioHelp lists the scenarios of bench.ScenarioTable, one per line (a
// description's further lines indented under it).
func scenarioHelp() string {
	var b strings.Builder
	for _, s := range bench.ScenarioTable {
		fmt.Fprintf(&b, "  %-10s %s\n", s.Name, strings.ReplaceAll(s.Measures, "\n", "\n             "))
	}
	return b.String()
}

// runBench runs the scenarios and prints their table (or JSON) to cfg.Out, progress
// to cfg.Err.
func runBench(ctx context.Context, c benchConfig) error {
	cfg := c.Bench
	if !c.JSON {
		cfg.Progress = c.Err
	}
	if c.CPUProfile != "" {
		pf, err := os.Create(c.CPUProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	results, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	out := c.Out
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"cpus": runtime.NumCPU(), "go": runtime.Version(), "sync": syncOrDefault(cfg.Sync), "quick": cfg.Quick,
			"seconds": time.Since(start).Seconds(), "results": results,
		})
	}
	fmt.Fprintf(out, "capdir bench: %d CPUs, %s, log sync %s%s, %s\n\n", runtime.NumCPU(), runtime.Version(),
		syncOrDefault(cfg.Sync), map[bool]string{true: ", quick"}[cfg.Quick], time.Since(start).Round(100*time.Millisecond))
	return bench.WriteTable(out, results)
}

func syncOrDefault(s string) string {
	if s == "" {
		return eventlog.DefaultSync
	}
	return s
}
