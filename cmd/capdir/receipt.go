package main

import (
	"context"
	"io"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

func init() { register(receiptCmd) }

// receiptConfig is what capdir receipt does.
type receiptConfig struct {
	serverConfig
	ID    string
	Token string // as invokeConfig.Token
	Wait  bool   // wait for the outcome while the call is pending
	JSON  bool   // print the server's whole JSON answer
	Out   io.Writer
}

// receiptCmd is `capdir receipt INV`: GET /api/dispatch?receipt= on a running server.
func receiptCmd() *cobra.Command {
	var cfg receiptConfig
	cmd := &cobra.Command{
		Use:   "receipt INVOCATION_ID",
		Short: "Print the outcome of a call made earlier (one that waited for approval or ran long), as invoke prints it",
		Long: "Print the outcome of a call made earlier, as capdir invoke prints it: the result, then a line with the\n" +
			"invocation id and the receipt status. A call still pending (held for the owner's approval, or still running)\n" +
			"prints what it waits for; with --wait the command waits for the outcome instead.\n\n" +
			"The owner may read any call; a capability token (--token, else $CAPDIR_TOKEN) reads the calls made with\n" +
			"its subject, so the holder of a token reads the outcome of its own call without the owner key.",
		Example: "  capdir receipt inv_01m8rda4m0rb1beseg56xm32pc --wait",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTokenFlag(cmd); err != nil {
				return err
			}
			cfg.ID, cfg.Out = args[0], cmd.OutOrStdout()
			return runReceipt(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 0)
	addTokenFlag(cmd, &cfg.Token)
	cmd.Flags().BoolVar(&cfg.Wait, "wait", false, "while the call is pending, wait for its outcome")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's whole JSON answer")
	return cmd
}

// runReceipt prints the outcome of the call cfg.ID, waiting for it with cfg.Wait.
// It fails when the call's result is not ok, or the id is not a call of the
// caller's.
func runReceipt(ctx context.Context, cfg receiptConfig) error {
	c, err := cfg.tokenClient(cfg.Token)
	if err != nil {
		return err
	}
	res, err := c.Outcome(ctx, cfg.ID, 0, c.token)
	if err == nil && res.Pending && cfg.Wait {
		res, err = waitOutcome(ctx, c, cfg.ID)
	}
	if err != nil {
		return c.explain(err)
	}
	return printOutcome(cfg.Out, cfg.ID, &res, cfg.JSON, c.token != "")
}

// outcomeWait is how long one request of waitOutcome waits: the server's
// dispatch wait.
const outcomeWait = api.DefaultDispatchWait

// waitOutcome asks for the outcome of the call inv, a dispatch wait at a time,
// until it is no longer pending or ctx ends.
func waitOutcome(ctx context.Context, c *serverClient, inv string) (client.DispatchResult, error) {
	for {
		res, err := c.Outcome(ctx, inv, outcomeWait, c.token)
		if err != nil || !res.Pending {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}
