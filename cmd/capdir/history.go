package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/spf13/cobra"
)

func init() { register(historyCmd) }

// historyConfig is what capdir history does.
type historyConfig struct {
	serverConfig
	Key  string
	JSON bool // print the server's JSON answer
	Out  io.Writer
}

// historyCmd is `capdir history KEY`: GET /api/directory/{key}/history on a running server.
func historyCmd() *cobra.Command {
	var cfg historyConfig
	cmd := &cobra.Command{
		Use:   "history KEY",
		Short: "Print every change of a row, oldest first: who, when, what changed and whether its contract did",
		Long: "Print every mutation of a row in log order, read from the log of a running capdir server: its\n" +
			"control-stream sequence, time, actor and action, whether the contract fingerprint changed, and each\n" +
			"field that changed, old -> new. A deleted row's history stays readable. A sequence it prints is what\n" +
			"?at= and capdir export --at take to see the directory as it stood then.",
		Example: "  capdir history GREET",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Key, cfg.Out = args[0], cmd.OutOrStdout()
			return runHistory(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's JSON answer")
	return cmd
}

// runHistory prints cfg.Key's history, as text or as JSON.
func runHistory(ctx context.Context, cfg historyConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	h, err := c.History(ctx, cfg.Key)
	if err != nil {
		return c.explain(err)
	}
	if cfg.JSON {
		enc := json.NewEncoder(cfg.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(h)
	}
	for _, ch := range h.Changes {
		printChange(cfg.Out, &ch)
	}
	return nil
}

// printChange writes one change: a heading line, then a line per field.
func printChange(w io.Writer, ch *contract.Change) {
	contractNote := "contract unchanged"
	if ch.ContractChanged {
		contractNote = "contract changed"
	}
	fmt.Fprintf(w, "seq %d  %s  %s  %s  (%s)\n", ch.Seq, rfc3339(&ch.At), ch.Actor, ch.Action, contractNote)
	for _, f := range ch.Fields {
		fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, fieldValue(f.Old), fieldValue(f.New))
	}
}

// fieldValue is v as JSON, clipped to one short line.
func fieldValue(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
