package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

func init() { register(approvalsCmd) }

// approvalsConfig is what capdir approvals does.
type approvalsConfig struct {
	serverConfig
	JSON     bool      // print the server's JSON answer
	Out, Err io.Writer // the list; "no call is waiting"
}

// approvalsCmd is `capdir approvals [approve|deny ID]`: the owner's view of the
// calls to sensitive rows that wait for a decision, and the decision.
func approvalsCmd() *cobra.Command {
	var cfg approvalsConfig
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the calls to sensitive rows waiting for the owner's approval (GET /api/approvals); approve or deny one",
		Long: "A token holder's call to a row marked sensitive does not run until the owner approves it; nobody deciding\n" +
			"before it expires (15 min by default, capdir serve --approval-ttl) is a refusal. Every outcome has one receipt.\n" +
			"With no subcommand, lists the calls waiting now: invocation id, key, caller, expiry and body.",
		Example: "  capdir approvals\n  capdir approvals approve inv_01…\n  capdir approvals deny inv_01…",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runApprovals(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's JSON answer")
	cmd.AddCommand(approvalDecideCmd("approve", "Approve a held call: it runs now, with its caller's token (still valid and unrevoked), and its receipt is the run's"),
		approvalDecideCmd("deny", "Deny a held call: it never runs; its receipt is REFUSED_APPROVAL_DENIED"))
	return cmd
}

// runApprovals prints the calls waiting for a decision, one a line, or as JSON.
func runApprovals(ctx context.Context, cfg approvalsConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	approvals, err := c.Approvals(ctx, 0)
	if err != nil {
		return c.explain(err)
	}
	if cfg.JSON {
		if approvals == nil {
			approvals = []client.Approval{}
		}
		enc := json.NewEncoder(cfg.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string][]client.Approval{"approvals": approvals})
	}
	if len(approvals) == 0 {
		fmt.Fprintln(cfg.Err, "no call is waiting for approval")
	}
	for _, a := range approvals {
		body := "(body unavailable: " + a.BodyError + ")"
		if a.Body != nil {
			body = strconv.Quote(*a.Body)
		}
		fmt.Fprintf(cfg.Out, "%s  %s  %s  expires %s  body %s\n", a.InvocationID, a.Key, a.Actor, a.ExpiresAt.UTC().Format(time.RFC3339), body)
	}
	return nil
}

// approvalDecideConfig is what capdir approvals approve|deny does.
type approvalDecideConfig struct {
	serverConfig
	Decision string // approve or deny
	ID       string // the held call's invocation id
	Out      io.Writer
}

// approvalDecideCmd is `capdir approvals approve|deny ID`.
func approvalDecideCmd(decision, short string) *cobra.Command {
	cfg := approvalDecideConfig{Decision: decision}
	cmd := &cobra.Command{
		Use:   decision + " INVOCATION_ID",
		Short: short + " (POST /api/approvals/ID)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.ID, cfg.Out = args[0], cmd.OutOrStdout()
			return runApprovalDecide(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 40*time.Second)
	return cmd
}

// runApprovalDecide records the decision and prints the outcome: the receipt's
// status, or where the receipt will be while the approved call still runs.
func runApprovalDecide(ctx context.Context, cfg approvalDecideConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	d, err := c.DecideApproval(ctx, cfg.ID, cfg.Decision)
	if err != nil {
		return c.explain(err)
	}
	done := map[string]string{"approve": "approved", "deny": "denied"}[cfg.Decision]
	if d.Pending {
		fmt.Fprintf(cfg.Out, "%s %s; the call is still running: its receipt will be at %s\n", cfg.ID, done, d.Receipt)
		return nil
	}
	fmt.Fprintf(cfg.Out, "%s %s: %s (ran: %v)\n", cfg.ID, done, d.Status, d.Ran)
	return nil
}
