package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/api/importer"
	"github.com/spf13/cobra"
)

func init() { register(upstreamCmd) }

// upstreamCmd is `capdir upstream add|list|remove`: an HTTP client of a running
// server.
func upstreamCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upstream",
		Short: "Register, list or remove upstream MCP servers on a running capdir server",
		Long: "An upstream MCP server's tools become rows of runner mcp, kept in step with its tool list. The owner\n" +
			"registers a streamable HTTP upstream by name and URL, with a credential named by environment variable as a\n" +
			"row's auth column names one (never a value); every node of the deployment calls it. A stdio upstream is a\n" +
			"command run on the node, so it comes only from capdir serve --mcp-stdio, never from these commands.",
	}
	cmd.AddCommand(upstreamAddCmd(), upstreamListCmd(), upstreamRemoveCmd())
	return cmd
}

// upstreamAddConfig is what capdir upstream add does.
type upstreamAddConfig struct {
	serverConfig
	Name, URL, Auth string
	Out             io.Writer
}

func upstreamAddCmd() *cobra.Command {
	var cfg upstreamAddConfig
	cmd := &cobra.Command{
		Use:   "add NAME URL",
		Short: "Register (or replace) a streamable HTTP upstream (PUT /api/upstreams/NAME)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Name, cfg.URL, cfg.Out = args[0], args[1], cmd.OutOrStdout()
			return runUpstreamAdd(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	cmd.Flags().StringVar(&cfg.Auth, "auth", "", `the upstream's credential, as a row's auth column: bearer:ENV, headers:{"Authorization":"Bearer $ENV"}, ...`)
	return cmd
}

func runUpstreamAdd(ctx context.Context, cfg upstreamAddConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	up, changed, err := c.RegisterUpstream(ctx, cfg.Name, cfg.URL, cfg.Auth)
	if err != nil {
		return c.explain(err)
	}
	if !changed {
		fmt.Fprintf(cfg.Out, "upstream %s already registered at %s: nothing changed\n", up.Name, up.URL)
		return nil
	}
	fmt.Fprintf(cfg.Out, "upstream %s registered at %s (control sequence %d); its tools become rows %s_*\n", up.Name, up.URL, up.Seq, importer.Key(up.Name, ""))
	return nil
}

// upstreamListConfig is what capdir upstream list does.
type upstreamListConfig struct {
	serverConfig
	JSON bool
	Out  io.Writer
}

func upstreamListCmd() *cobra.Command {
	var cfg upstreamListConfig
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the upstream MCP servers the node calls, from flags and registered (GET /api/upstreams)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runUpstreamList(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's JSON answer")
	return cmd
}

func runUpstreamList(ctx context.Context, cfg upstreamListConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	ups, err := c.Upstreams(ctx)
	if err != nil {
		return c.explain(err)
	}
	if cfg.JSON {
		enc := json.NewEncoder(cfg.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string][]client.Upstream{"upstreams": ups})
	}
	if len(ups) == 0 {
		fmt.Fprintln(cfg.Out, "no upstreams")
		return nil
	}
	tw := tabwriter.NewWriter(cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tTRANSPORT\tURL\tAUTH")
	for _, u := range ups {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.From, u.Transport, dash(u.URL), dash(u.Auth))
	}
	return tw.Flush()
}

// upstreamRemoveConfig is what capdir upstream remove does.
type upstreamRemoveConfig struct {
	serverConfig
	Name string
	Out  io.Writer
}

func upstreamRemoveCmd() *cobra.Command {
	var cfg upstreamRemoveConfig
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a registered upstream (DELETE /api/upstreams/NAME); its rows stay and their calls fail",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Name, cfg.Out = args[0], cmd.OutOrStdout()
			return runUpstreamRemove(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	return cmd
}

func runUpstreamRemove(ctx context.Context, cfg upstreamRemoveConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	err = c.RemoveUpstream(ctx, cfg.Name)
	if notFound(err) {
		return fmt.Errorf("no upstream %s is registered on %s: nothing to remove (capdir upstream list shows them)", cfg.Name, c.BaseURL())
	}
	if err != nil {
		return c.explain(err)
	}
	fmt.Fprintf(cfg.Out, "upstream %s removed; calls of its rows now fail with ERR:mcp:unknown_upstream:%s\n", cfg.Name, cfg.Name)
	return nil
}

// dash is s, or "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
