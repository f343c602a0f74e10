package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

func init() { register(exportCmd) }

// exportConfig is what capdir export does.
type exportConfig struct {
	serverConfig
	client.ExportOptions
	Output   string    // a file, replaced atomically; stdout when empty or "-"
	Out, Err io.Writer // stdout, stderr
}

// exportCmd is `capdir export`: an HTTP client of a running server.
func exportCmd() *cobra.Command {
	var cfg exportConfig
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a running capdir server's directory as a JSON array (or NDJSON) that capdir import reads back",
		Long: "Write the directory of a running capdir server, in canonical order, as a JSON array of rows\n" +
			"(or NDJSON with --ndjson) to stdout or -o FILE. It pages through GET /api/directory; rows\n" +
			"carry every stored column (row_num, which is computed, is left out), so the output imports\n" +
			"back with capdir import. Writes made while it pages may or may not be included.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out, cfg.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runExport(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, time.Minute)
	f := cmd.Flags()
	f.StringVarP(&cfg.Output, "output", "o", "", "write to FILE instead of stdout (replaced atomically)")
	f.BoolVar(&cfg.NDJSON, "ndjson", false, "write NDJSON, one row per line, instead of a JSON array")
	f.StringVar(&cfg.Category, "category", "", "only rows of this category")
	f.StringVar(&cfg.Type, "type", "", "only rows of this type (fn, http, agent, flow)")
	f.StringVar(&cfg.Enabled, "enabled", "", "only enabled (1) or disabled (0) rows")
	f.StringVar(&cfg.At, "at", "", "the directory as it stood at a control-stream sequence (as capdir history prints) or an RFC 3339 time")
	return cmd
}

// runExport writes the directory to cfg.Output (through a temporary file renamed
// into place) or to cfg.Out.
func runExport(ctx context.Context, cfg exportConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	w := cfg.Out
	var file *os.File
	if cfg.Output != "" && cfg.Output != "-" {
		file, err = os.CreateTemp(filepath.Dir(cfg.Output), ".capdir-export-*")
		if err != nil {
			return err
		}
		defer os.Remove(file.Name()) // a no-op once renamed
		defer file.Close()
		w = file
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	n, err := c.Export(ctx, bw, cfg.ExportOptions)
	if err != nil {
		err = c.explain(err)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && file != nil {
		if err = file.Close(); err == nil {
			err = os.Rename(file.Name(), cfg.Output)
		}
	}
	if err != nil {
		return err
	}
	if file != nil {
		fmt.Fprintf(cfg.Err, "exported %d rows to %s\n", n, cfg.Output)
	}
	return nil
}
