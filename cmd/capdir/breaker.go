package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

func init() { register(breakerCmd) }

// breakerCmd is `capdir breaker list|reset KEY`: an HTTP client of a running server.
func breakerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "breaker",
		Short: "List open auth breakers, or reset one, on a running capdir server",
		Long: "A row's breaker opens after 8 consecutive upstream 401/403 answers; every call then fails at once with\n" +
			"ERR:breaker_open:<KEY> and nothing is sent upstream. It closes after the cooldown (1h by default), when the\n" +
			"credential the row names is replaced, or on an owner reset. These commands talk to a running server over\n" +
			"HTTP with the owner key.",
	}
	cmd.AddCommand(breakerListCmd(), breakerResetCmd())
	return cmd
}

// breakerListConfig is what capdir breaker list does.
type breakerListConfig struct {
	serverConfig
	JSON bool // print the server's JSON answer
	Out  io.Writer
}

func breakerListCmd() *cobra.Command {
	var cfg breakerListConfig
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the breakers refusing calls now (GET /api/breaker)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runBreakerList(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's JSON answer")
	return cmd
}

// runBreakerList prints the breakers refusing calls now, as a table or as JSON.
func runBreakerList(ctx context.Context, cfg breakerListConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	breakers, err := c.Breakers(ctx)
	if err != nil {
		return c.explain(err)
	}
	w := cfg.Out
	if cfg.JSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string][]client.Breaker{"breakers": breakers})
	}
	if len(breakers) == 0 {
		fmt.Fprintln(w, "no open breakers")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTRIKES\tOPENED_AT\tCLOSES_AT")
	for _, b := range breakers {
		if b.Open {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", b.Key, b.Strikes, rfc3339(b.OpenedAt), rfc3339(b.ClosesAt))
		}
		for _, c := range b.RefusedCallers { // refused by its own strikes; the row is open to others
			fmt.Fprintf(tw, "%s (%s only)\t-\t%s\t%s\n", b.Key, c.Caller, rfc3339(&c.OpenedAt), rfc3339(&c.ClosesAt))
		}
	}
	return tw.Flush()
}

// breakerResetConfig is what capdir breaker reset does.
type breakerResetConfig struct {
	serverConfig
	Key string
	Out io.Writer
}

func breakerResetCmd() *cobra.Command {
	var cfg breakerResetConfig
	cmd := &cobra.Command{
		Use:   "reset KEY",
		Short: "Close KEY's breaker now (DELETE /api/breaker/KEY appends an owner BREAKER_RESET)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Key, cfg.Out = args[0], cmd.OutOrStdout()
			return runBreakerReset(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	return cmd
}

// runBreakerReset closes cfg.Key's breaker; a key with neither a row nor a breaker
// is an error that says so.
func runBreakerReset(ctx context.Context, cfg breakerResetConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	err = c.ResetBreaker(ctx, cfg.Key)
	if notFound(err) {
		return fmt.Errorf("%s is neither a row nor a breaker on %s: nothing to reset (capdir breaker list shows the open breakers)", cfg.Key, c.BaseURL())
	}
	if err != nil {
		return c.explain(err)
	}
	fmt.Fprintf(cfg.Out, "breaker %s reset\n", cfg.Key)
	return nil
}

// rfc3339 formats an optional time, "-" when absent.
func rfc3339(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
