package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/spf13/cobra"
)

func init() { register(invokeCmd) }

// invokeConfig is what capdir invoke does.
type invokeConfig struct {
	serverConfig
	Key, Body string
	// Token is a capability token to invoke with instead of the owner key; when
	// empty, $CAPDIR_TOKEN, else the owner key.
	Token string
	Shape bool // build the outbound request and print it instead of sending it
	JSON  bool // print the server's whole JSON answer
	// Wait, when the call is held for the owner's approval or outlasts the
	// dispatch wait, waits for its outcome instead of printing its id.
	Wait bool
	Out  io.Writer
}

// invokeCmd is `capdir invoke KEY [BODY]`: POST /api/dispatch on a running server.
func invokeCmd() *cobra.Command {
	var cfg invokeConfig
	cmd := &cobra.Command{
		Use:   "invoke KEY [BODY]",
		Short: "Invoke a row on a running capdir server and print its result and invocation id",
		Long: "Invoke a row on a running capdir server. BODY is one string of arguments separated by |\n" +
			"(for example 'a|b'). The result goes to stdout, then a line with the invocation id and the\n" +
			"receipt status. The exit status is non-zero when the result is an ERR: string.\n\n" +
			"It sends the capability token of --token, else of $CAPDIR_TOKEN, else the owner key.\n\n" +
			"A token holder's call to a sensitive row waits for the owner's approval, and a slow call may outlast\n" +
			"the server's dispatch wait: invoke then prints the invocation id and what it waits for, and\n" +
			"capdir receipt ID --wait prints the outcome later; with --wait, invoke waits for it itself.",
		Example: "  # a row of the README's walk-through, and GREET of its first steps (written again by docs/mcp.md)\n" +
			"  capdir invoke HEALTH\n" +
			"  capdir invoke HEALTH --shape\n" +
			"  capdir invoke GREET Ada --json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return fmt.Errorf("invoke takes the KEY of a row, then optionally its BODY of arguments separated by | "+
					"(capdir invoke GREET Ada); got %d arguments (capdir invoke --help; capdir export lists the rows)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTokenFlag(cmd); err != nil {
				return err
			}
			cfg.Key, cfg.Out = args[0], cmd.OutOrStdout()
			if len(args) == 2 {
				cfg.Body = args[1]
			}
			return runInvoke(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 0)
	cmd.Flags().BoolVar(&cfg.Shape, "shape", false, "build the outbound request and print it instead of sending it")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the server's whole JSON answer")
	cmd.Flags().BoolVar(&cfg.Wait, "wait", false, "when the call waits for the owner's approval or runs past the dispatch wait, wait for its outcome")
	addTokenFlag(cmd, &cfg.Token)
	return cmd
}

// runInvoke invokes cfg.Key and prints the result (or the shape, or the whole
// answer) and a line with the invocation id and the receipt status. It fails when
// the key is unknown (after printing the refusal, with did_you_mean) or the result
// is not ok.
func runInvoke(ctx context.Context, cfg invokeConfig) error {
	c, err := cfg.tokenClient(cfg.Token)
	if err != nil {
		return err
	}
	res, err := c.Dispatch(ctx, client.DispatchRequest{Key: cfg.Key, Body: cfg.Body, Shape: cfg.Shape, Token: c.token})
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		// unknown_key: show the refusal, did_you_mean included.
		fmt.Fprintln(cfg.Out, string(apiErr.Body))
		return fmt.Errorf("unknown key %s", cfg.Key)
	}
	if err != nil {
		return c.explain(err)
	}
	if res.Pending && cfg.Wait {
		pendingLine(cfg.Out, &res, c.token != "", true)
		res, err = waitOutcome(ctx, c, res.InvocationID)
		if err != nil {
			return c.explain(err)
		}
	}
	return printOutcome(cfg.Out, cfg.Key, &res, cfg.JSON, c.token != "")
}

// printOutcome prints a call's answer: the whole JSON answer with asJSON, else
// the result (or shape) and a line with the invocation id and receipt status;
// while it is pending, what it waits for and how to wait for it. It fails when
// the result is not ok.
func printOutcome(w io.Writer, key string, res *client.DispatchResult, asJSON, token bool) error {
	if asJSON {
		fmt.Fprintln(w, string(res.Raw))
	}
	if res.Pending {
		if !asJSON {
			pendingLine(w, res, token, false)
		}
		return nil
	}
	if !asJSON {
		if len(res.Shape) > 0 {
			fmt.Fprintln(w, string(res.Shape))
		} else {
			fmt.Fprintln(w, res.Result)
		}
		fmt.Fprintf(w, "%s %s\n", res.Proof.InvocationID, res.Proof.Status)
	}
	if !res.OK {
		return fmt.Errorf("%s failed: %s", key, res.Proof.Status)
	}
	return nil
}

// pendingLine says what a pending call waits for, and how its caller waits for
// the outcome (waiting: the command waits now).
func pendingLine(w io.Writer, res *client.DispatchResult, token, waiting bool) {
	what := "PENDING: the call is still running"
	if res.Status == wire.StatusPendingApproval {
		what = "PENDING_APPROVAL: the row is sensitive, so the call waits for the owner's approval (capdir approvals)"
	}
	how := "; wait for its outcome with: capdir receipt " + res.InvocationID + " --wait"
	if token {
		how += " (with the same token)"
	}
	if waiting {
		how = "; waiting for its outcome"
	}
	fmt.Fprintf(w, "%s %s%s\n", res.InvocationID, what, how)
}
