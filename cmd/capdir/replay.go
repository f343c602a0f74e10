package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func init() { register(replayCmd); register(digestCmd) }

func replayCmd() *cobra.Command {
	var dataDir, natsURL string
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild the projection from sequence 1 into a fresh bbolt file and swap it in atomically",
		Long: "Rebuild the projection from sequence 1 into a fresh bbolt file and swap it in atomically.\n" +
			"Stop capdir serve on this data dir first: the embedded log and the projection are locked while it runs.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dataDir, NATSURL: natsURL})
			if err != nil {
				return err
			}
			defer l.Close()
			var total uint64
			for _, s := range eventlog.Streams {
				last, err := l.LastSeq(ctx, s)
				if err != nil {
					return err
				}
				total += last
			}
			out := cmd.OutOrStdout()
			tty := isTerminal(out)
			start := time.Now()
			var base = map[string]uint64{}
			var done uint64
			lastPrint := time.Time{}
			progress := func(stream string, seq, last uint64) {
				done = base[stream] + seq
				if stream == eventlog.ControlStream {
					base[eventlog.DataStream] = seq
				}
				if time.Since(lastPrint) < 200*time.Millisecond && seq < last {
					return
				}
				lastPrint = time.Now()
				rate := float64(done) / time.Since(start).Seconds()
				if tty {
					fmt.Fprintf(out, "\r%s %d/%d events  %.0f events/s", bar(done, total, 30), done, total, rate)
				} else {
					fmt.Fprintf(out, "replay: %s %d/%d events, %.0f events/s\n", stream, done, total, rate)
				}
			}
			path := capdir.ProjectionPath(dataDir)
			if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: l}, progress); err != nil {
				return err
			}
			el := time.Since(start)
			if tty {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "replayed %d events in %s (%.0f events/s) into %s\n", total, el.Round(time.Millisecond), float64(total)/el.Seconds(), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", defaultDataDir(), "data directory")
	cmd.Flags().StringVar(&natsURL, "nats-url", "", "read the log from an existing NATS cluster")
	return cmd
}

func digestCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "digest",
		Short: "Print a stable SHA-256 of the projected state, to compare two states",
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := projector.FileDigest(capdir.ProjectionPath(dataDir))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), d)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", defaultDataDir(), "data directory")
	return cmd
}

func bar(done, total uint64, width int) string {
	if total == 0 {
		return "[" + strings.Repeat("=", width) + "]"
	}
	n := int(float64(done) / float64(total) * float64(width))
	n = min(n, width)
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
