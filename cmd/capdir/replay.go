package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/spf13/cobra"
)

func init() { register(replayCmd); register(digestCmd) }

func replayCmd() *cobra.Command {
	var cfg replayConfig
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild the projection from sequence 1 into a fresh bbolt file and swap it in atomically",
		Long: "Rebuild the projection from sequence 1 into a fresh bbolt file and swap it in atomically.\n" +
			"Stop capdir serve on this data dir first: while it runs, the data dir is locked and replay is refused.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			cfg.Out = cmd.OutOrStdout()
			return runReplay(ctx, cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory ($CAPDIR_DATA)")
	clusterFlags(cmd, &cfg.Log, "read the log from an existing NATS cluster (the node's own --nats-url)")
	return cmd
}

// replayConfig is what capdir replay works on.
type replayConfig struct {
	DataDir string
	// Log reaches the log's cluster (NATSURL and Creds, as serve's); the data
	// dir's embedded log when NATSURL is empty.
	Log eventlog.Config
	Out io.Writer // progress and the summary
}

// runReplay rebuilds cfg.DataDir's projection from the log, printing progress to
// cfg.Out. It locks the data dir first: a dir a server holds, or one without a log,
// is refused before anything is opened or created.
func runReplay(ctx context.Context, cfg replayConfig) error {
	out := cfg.Out
	var lock *capdir.DataDirLock
	var err error
	if cfg.Log.NATSURL == "" {
		lock, err = capdir.LockExisting(cfg.DataDir)
	} else if err = os.MkdirAll(cfg.DataDir, 0o700); err == nil {
		lock, err = capdir.LockDataDir(cfg.DataDir)
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	lc := cfg.Log
	lc.DataDir, lc.Existing = cfg.DataDir, true // the node's streams, as they are
	l, err := eventlog.Open(ctx, lc)
	if err != nil {
		return err
	}
	defer l.Close()
	var total uint64
	for _, s := range wire.Streams {
		last, err := l.LastSeq(ctx, s)
		if err != nil {
			return err
		}
		total += last
	}
	// On a terminal, the progress bar redraws its line (a carriage return the
	// terminal's guard would escape, so written to the terminal itself).
	tty := terminalFile(out)
	start := time.Now()
	var base = map[string]uint64{}
	var done uint64
	lastPrint := time.Time{}
	progress := func(stream string, seq, last uint64) {
		done = base[stream] + seq
		if stream == wire.ControlStream {
			base[wire.DataStream] = seq
		}
		if time.Since(lastPrint) < 200*time.Millisecond && seq < last {
			return
		}
		lastPrint = time.Now()
		rate := float64(done) / time.Since(start).Seconds()
		if tty != nil {
			fmt.Fprintf(tty, "\r%s %d/%d events  %.0f events/s", bar(done, total, 30), done, total, rate)
		} else {
			fmt.Fprintf(out, "replay: reading %s, %d/%d of the log, %.0f events/s\n", stream, done, total, rate)
		}
	}
	path := capdir.ProjectionPath(cfg.DataDir)
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: l}, progress); err != nil {
		return err
	}
	el := time.Since(start)
	if tty != nil {
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "replayed %d events in %s (%.0f events/s) into %s\n", total, el.Round(time.Millisecond), float64(total)/el.Seconds(), path)
	return nil
}

// digestConfig is what capdir digest reads.
type digestConfig struct {
	DataDir string
	Out     io.Writer
}

func digestCmd() *cobra.Command {
	var cfg digestConfig
	cmd := &cobra.Command{
		Use:   "digest",
		Short: "Print a stable SHA-256 of the projected state, to compare two states",
		Long: "Print a stable SHA-256 of the projected state, to compare two states.\n" +
			"Stop capdir serve on this data dir first: while it runs, the data dir is locked and digest is refused.",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runDigest(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory ($CAPDIR_DATA)")
	return cmd
}

// runDigest prints the digest of cfg.DataDir's projection to cfg.Out. Like
// runReplay it locks the data dir first.
func runDigest(_ context.Context, cfg digestConfig) error {
	lock, path, err := lockProjection(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	d, err := projector.FileDigest(path)
	if errors.Is(err, fs.ErrNotExist) {
		return noProjection(cfg.DataDir)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cfg.Out, d)
	return err
}

// lockProjection locks a data dir for a tool that reads or rewrites its
// projection file, and returns the file's path. A node whose log is on a
// cluster keeps only its projection in its data dir; without the file, the dir
// must hold a log.
func lockProjection(dataDir string) (*capdir.DataDirLock, string, error) {
	path := capdir.ProjectionPath(dataDir)
	lockDir := capdir.LockExisting
	if _, err := os.Stat(path); err == nil {
		lockDir = capdir.LockDataDir
	}
	lock, err := lockDir(dataDir)
	return lock, path, err
}

// noProjection is the error of a data dir with a log and no projection file.
func noProjection(dataDir string) error {
	return fmt.Errorf("%w in %s (no %s): capdir replay --data %s rebuilds it from the log", capdir.ErrNoProjection, dataDir, capdir.ProjectionPath(dataDir), dataDir)
}

func bar(done, total uint64, width int) string {
	if total == 0 {
		return "[" + strings.Repeat("=", width) + "]"
	}
	n := int(float64(done) / float64(total) * float64(width))
	n = min(n, width)
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}
