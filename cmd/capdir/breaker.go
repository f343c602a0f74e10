package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/spf13/cobra"
)

func init() { register(breakerCmd) }

// breakerCmd is `capdir breaker list|reset KEY`: an HTTP client of a running server.
func breakerCmd() *cobra.Command {
	c := &breakerAPI{}
	cmd := &cobra.Command{
		Use:   "breaker",
		Short: "List open auth breakers, or reset one, on a running capdir server",
		Long: "A row's breaker opens after 8 consecutive upstream 401/403 answers; every call then fails at once with\n" +
			"ERR:breaker_open:<KEY>. It closes after the cooldown (1h by default), when the credential the row names is\n" +
			"replaced, or on an owner reset. These commands talk to a running server over HTTP with the owner key.",
	}
	f := cmd.PersistentFlags()
	server := os.Getenv("CAPDIR_URL")
	if server == "" {
		server = "http://127.0.0.1:8080"
	}
	f.StringVar(&c.server, "server", server, "base URL of the capdir server ($CAPDIR_URL)")
	f.StringVar(&c.key, "key", "", "owner key (default $CAPDIR_TERMINAL_KEY, else <--data>/terminal.key)")
	f.StringVar(&c.dataDir, "data", defaultDataDir(), "data directory whose terminal.key to use when --key and $CAPDIR_TERMINAL_KEY are unset")
	f.DurationVar(&c.timeout, "timeout", 30*time.Second, "how long to wait for the server")

	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the breakers refusing calls now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var out struct {
				Breakers []api.BreakerView `json:"breakers"`
			}
			raw, err := c.do(cmd.Context(), http.MethodGet, "/api/breaker", &out)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				_, err := w.Write(raw)
				return err
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
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")

	reset := &cobra.Command{
		Use:   "reset KEY",
		Short: "Close KEY's breaker now (appends an owner BREAKER_RESET to the log)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out struct {
				OK    bool   `json:"ok"`
				Key   string `json:"key"`
				Reset bool   `json:"reset"`
			}
			if _, err := c.do(cmd.Context(), http.MethodDelete, "/api/breaker/"+url.PathEscape(args[0]), &out); err != nil {
				return err
			}
			if !out.OK || !out.Reset {
				return fmt.Errorf("the server did not confirm the reset of %s", args[0])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "breaker %s reset\n", out.Key)
			return nil
		},
	}
	cmd.AddCommand(list, reset)
	return cmd
}

// breakerAPI is the breaker commands' view of a running server.
type breakerAPI struct {
	server, key, dataDir string
	timeout              time.Duration
}

// ownerKey is --key, else $CAPDIR_TERMINAL_KEY, else the data dir's terminal.key.
func (c *breakerAPI) ownerKey() (string, error) {
	if c.key != "" {
		return c.key, nil
	}
	if k := os.Getenv("CAPDIR_TERMINAL_KEY"); k != "" {
		return k, nil
	}
	path := filepath.Join(c.dataDir, "terminal.key")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no owner key: pass --key, set CAPDIR_TERMINAL_KEY, or point --data at the server's data dir (%w)", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// do sends one owner request and decodes a 200 answer into out. Any other status
// is an error carrying the server's {"error": …} text.
func (c *breakerAPI) do(ctx context.Context, method, path string, out any) ([]byte, error) {
	key, err := c.ownerKey()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.server, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-terminal-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (is capdir serve running there? set --server or CAPDIR_URL)", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, e.Error)
		}
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, errors.Join(fmt.Errorf("%s %s: unexpected answer %q", method, path, raw), err)
	}
	return raw, nil
}

func rfc3339(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
