package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/capdir/capdir/api"
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

func breakerListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the breakers refusing calls now (GET /api/breaker)",
		Args:  cobra.NoArgs,
	}
	sf := addServerFlags(cmd, 30*time.Second)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := sf.client()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.doJSON(cmd.Context(), http.MethodGet, "/api/breaker", nil, &raw); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if asJSON {
			_, err := fmt.Fprintf(w, "%s\n", raw)
			return err
		}
		var out struct {
			Breakers []api.BreakerView `json:"breakers"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("GET /api/breaker: unexpected answer: %w", err)
		}
		if len(out.Breakers) == 0 {
			fmt.Fprintln(w, "no open breakers")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tSTRIKES\tOPENED_AT\tCLOSES_AT")
		for _, b := range out.Breakers {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", b.Key, b.Strikes, rfc3339(b.OpenedAt), rfc3339(b.ClosesAt))
		}
		return tw.Flush()
	}
	return cmd
}

func breakerResetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset KEY",
		Short: "Close KEY's breaker now (DELETE /api/breaker/KEY appends an owner BREAKER_RESET)",
		Args:  cobra.ExactArgs(1),
	}
	sf := addServerFlags(cmd, 30*time.Second)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := sf.client()
		if err != nil {
			return err
		}
		var out struct {
			OK    bool   `json:"ok"`
			Key   string `json:"key"`
			Reset bool   `json:"reset"`
		}
		err = c.doJSON(cmd.Context(), http.MethodDelete, "/api/breaker/"+url.PathEscape(args[0]), nil, &out)
		var apiErr *apiError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
			return fmt.Errorf("%s is neither a row nor a breaker on %s: nothing to reset (capdir breaker list shows the open breakers)", args[0], c.base)
		}
		if err != nil {
			return err
		}
		if !out.OK || !out.Reset {
			return fmt.Errorf("the server did not confirm the reset of %s", args[0])
		}
		fmt.Fprintf(cmd.OutOrStdout(), "breaker %s reset\n", out.Key)
		return nil
	}
	return cmd
}

// rfc3339 formats an optional time, "-" when absent.
func rfc3339(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
