package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/spf13/cobra"
)

func init() { register(busCmd) }

// busCmd is `capdir bus add-client|list|remove`: the identities the embedded NATS
// server admits when it listens on TCP (serve --nats-listen). They are files in the
// data dir; a running server reads them at start, so a change takes effect at its
// next start.
func busCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bus",
		Short: "Manage the NATS identities the embedded server admits (serve --nats-listen)",
		Long: "When capdir serve --nats-listen opens the embedded NATS server to TCP clients, every client must\n" +
			"authenticate with an nkey made here. A client (the default role) may publish invocation requests on\n" +
			"capdir.data.bus.<NAME>.<KEY> and read its own receipt notices, nothing else; a service may answer the\n" +
			"requests capdir sends to the subjects it serves (rows of the nats runner); a node is another capdir\n" +
			"node sharing this log (every permission). The records live in <data>/bus; capdir serve reads them when\n" +
			"it starts, so restart it after adding or removing one.",
	}
	cmd.AddCommand(busAddCmd(), busListCmd(), busRemoveCmd())
	return cmd
}

// busAddConfig is what capdir bus add-client does.
type busAddConfig struct {
	DataDir string
	Client  eventlog.BusClient // Name, Role, Serve
	Out     io.Writer
}

func busAddCmd() *cobra.Command {
	var cfg busAddConfig
	cmd := &cobra.Command{
		Use:   "add-client NAME",
		Short: "Make a bus identity: writes its nkey seed to <data>/bus/NAME.nk (mode 0600) and records its public key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Client.Name, cfg.Out = args[0], cmd.OutOrStdout()
			return runBusAdd(cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory of the server that admits it; $CAPDIR_DATA")
	f.StringVar(&cfg.Client.Role, "role", eventlog.RoleClient, "client (invokes rows), service (serves nats-runner subjects, with --serve) or node (another capdir node)")
	f.StringSliceVar(&cfg.Client.Serve, "serve", nil, "with --role service: a subject it serves (repeatable or comma-separated; * and > allowed after the first token)")
	return cmd
}

// runBusAdd makes the identity cfg.Client in the data dir and says what it may do.
func runBusAdd(cfg busAddConfig) error {
	if err := wire.CheckClientName(cfg.Client.Name); err != nil {
		return fmt.Errorf("%w; e.g. capdir bus add-client billing-service", err)
	}
	c, seed, err := eventlog.AddBusClient(cfg.DataDir, cfg.Client, time.Now())
	if err != nil {
		return err
	}
	w := cfg.Out
	fmt.Fprintf(w, "bus %s %s added; public key %s\n", c.Role, c.Name, c.PublicKey)
	fmt.Fprintf(w, "its seed is in %s (mode 0600): hand that file to the %s and keep it secret; anyone holding it is %s\n", seed, c.Role, c.Name)
	switch c.Role {
	case eventlog.RoleClient:
		fmt.Fprintf(w, "it may publish requests on %s and read %s, with the inbox prefix %s\n",
			wire.BusClientSubjects(c.Name), wire.ReceiptNotices(c.Name), wire.InboxPrefix(c.Name))
	case eventlog.RoleService:
		fmt.Fprintf(w, "it may receive and answer requests on %s\n", strings.Join(c.Serve, ", "))
	case eventlog.RoleNode:
		fmt.Fprintf(w, "it has every permission: start the other node with --nats-url and --nats-creds %s\n", seed)
	}
	fmt.Fprintln(w, "restart capdir serve --nats-listen to admit it")
	return nil
}

// busDirConfig is what capdir bus list and remove do.
type busDirConfig struct {
	DataDir string
	Name    string // remove: the identity
	Out     io.Writer
}

func busListCmd() *cobra.Command {
	var cfg busDirConfig
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the bus identities recorded in the data dir",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runBusList(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory; $CAPDIR_DATA")
	return cmd
}

// runBusList prints the identities recorded in the data dir, as a table.
func runBusList(cfg busDirConfig) error {
	clients, err := eventlog.BusClients(cfg.DataDir)
	if err != nil {
		return err
	}
	if len(clients) == 0 {
		_, err := fmt.Fprintf(cfg.Out, "no bus identities in %s (capdir bus add-client NAME makes one)\n", eventlog.BusDir(cfg.DataDir))
		return err
	}
	tw := tabwriter.NewWriter(cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tPUBLIC_KEY\tCREATED\tSEED_IN_DATA_DIR\tSERVES")
	for _, c := range clients {
		seed := "no"
		if _, err := os.Stat(eventlog.BusSeedPath(cfg.DataDir, c.Name)); err == nil {
			seed = "yes"
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		serves := strings.Join(c.Serve, ",")
		if serves == "" {
			serves = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Role, c.PublicKey, c.CreatedAt.Format(time.RFC3339), seed, serves)
	}
	return tw.Flush()
}

func busRemoveCmd() *cobra.Command {
	var cfg busDirConfig
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Delete a bus identity's record and seed; the server refuses it from its next start",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Name, cfg.Out = args[0], cmd.OutOrStdout()
			return runBusRemove(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory; $CAPDIR_DATA")
	return cmd
}

// runBusRemove deletes the identity cfg.Name's record and seed.
func runBusRemove(cfg busDirConfig) error {
	if err := eventlog.RemoveBusClient(cfg.DataDir, cfg.Name); err != nil {
		return err
	}
	_, err := fmt.Fprintf(cfg.Out, "removed %s; restart capdir serve to refuse it (connections it holds now last until then)\n", cfg.Name)
	return err
}
