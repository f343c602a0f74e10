package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(approvalsCmd) }

// approvalsCmd is `capdir approvals [approve|deny ID]`: the owner's view of the
// calls to sensitive rows that wait for a decision, and the decision.
func approvalsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the calls to sensitive rows waiting for the owner's approval (GET /api/approvals); approve or deny one",
		Long: "A token holder's call to a row marked sensitive does not run until the owner approves it; nobody deciding\n" +
			"before it expires (15 min by default, capdir serve --approval-ttl) is a refusal. Every outcome has one receipt.\n" +
			"With no subcommand, lists the calls waiting now: invocation id, key, caller, expiry and body.",
		Example: "  capdir approvals\n  capdir approvals approve inv_01…\n  capdir approvals deny inv_01…",
		Args:    cobra.NoArgs,
	}
	sf := addServerFlags(cmd, 30*time.Second)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer as it is")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := sf.client()
		if err != nil {
			return err
		}
		var out struct {
			Approvals []struct {
				InvocationID string    `json:"invocation_id"`
				Key          string    `json:"key"`
				Actor        string    `json:"actor"`
				Body         *string   `json:"body"`
				BodyError    string    `json:"body_error"`
				ExpiresAt    time.Time `json:"expires_at"`
			} `json:"approvals"`
		}
		var raw json.RawMessage
		if err := c.doJSON(cmd.Context(), http.MethodGet, "/api/approvals", nil, &raw); err != nil {
			return err
		}
		if asJSON {
			fmt.Fprintln(cmd.OutOrStdout(), string(raw))
			return nil
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("GET /api/approvals: unexpected answer: %w", err)
		}
		w := cmd.OutOrStdout()
		if len(out.Approvals) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "no call is waiting for approval")
		}
		for _, a := range out.Approvals {
			body := "(body unavailable: " + a.BodyError + ")"
			if a.Body != nil {
				body = strconv.Quote(*a.Body)
			}
			fmt.Fprintf(w, "%s  %s  %s  expires %s  body %s\n", a.InvocationID, a.Key, a.Actor, a.ExpiresAt.UTC().Format(time.RFC3339), body)
		}
		return nil
	}
	cmd.AddCommand(approvalDecideCmd("approve", "Approve a held call: it runs now, with its caller's token (still valid and unrevoked), and its receipt is the run's"),
		approvalDecideCmd("deny", "Deny a held call: it never runs; its receipt is REFUSED_APPROVAL_DENIED"))
	return cmd
}

// approvalDecideCmd is `capdir approvals approve|deny ID`.
func approvalDecideCmd(decision, short string) *cobra.Command {
	done := map[string]string{"approve": "approved", "deny": "denied"}[decision]
	cmd := &cobra.Command{
		Use:   decision + " INVOCATION_ID",
		Short: short + " (POST /api/approvals/ID)",
		Args:  cobra.ExactArgs(1),
	}
	sf := addServerFlags(cmd, 40*time.Second)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := sf.client()
		if err != nil {
			return err
		}
		var out struct {
			Status  string `json:"status"`
			Ran     bool   `json:"ran"`
			Pending bool   `json:"pending"`
			Receipt string `json:"receipt"`
		}
		path := "/api/approvals/" + url.PathEscape(args[0])
		if err := c.doJSON(cmd.Context(), http.MethodPost, path, map[string]string{"decision": decision}, &out); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if out.Pending {
			fmt.Fprintf(w, "%s %s; the call is still running: its receipt will be at %s\n", args[0], done, out.Receipt)
			return nil
		}
		fmt.Fprintf(w, "%s %s: %s (ran: %v)\n", args[0], done, out.Status, out.Ran)
		return nil
	}
	return cmd
}
