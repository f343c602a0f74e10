package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/capdir/capdir/projector"
	"github.com/spf13/cobra"
)

func init() { register(compactCmd) }

// compactConfig is what capdir compact works on.
type compactConfig struct {
	DataDir string
	Out     io.Writer
}

func compactCmd() *cobra.Command {
	var cfg compactConfig
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Copy the projection into a compact file and swap it in, giving back the space bbolt keeps",
		Long: "Copy the projection into a compact file (every page full, every receipt in the compact encoding) and swap it in atomically.\n" +
			"bbolt never shrinks its file in place: compact gives back the pages it has freed. The digest stays the same.\n" +
			"Stop capdir serve on this data dir first: while it runs, the data dir is locked and compact is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runCompact(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory ($CAPDIR_DATA)")
	return cmd
}

// runCompact compacts cfg.DataDir's projection file. Like runDigest it locks
// the data dir first: a dir a node holds is refused before the file is opened.
func runCompact(_ context.Context, cfg compactConfig) error {
	lock, path, err := lockProjection(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	st, err := projector.Compact(path)
	if errors.Is(err, fs.ErrNotExist) {
		return noProjection(cfg.DataDir)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cfg.Out, "compacted %s: %d bytes, %d before\n", path, st.After, st.Before)
	return err
}
