package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
)

func init() { register(invokeCmd) }

// invokeCmd is `capdir invoke KEY [BODY]`: POST /api/dispatch on a running server.
func invokeCmd() *cobra.Command {
	var shape, asJSON bool
	cmd := &cobra.Command{
		Use:   "invoke KEY [BODY]",
		Short: "Invoke a row on a running capdir server and print its result and invocation id",
		Long: "Invoke a row on a running capdir server. BODY is one string of arguments separated by |\n" +
			"(for example 'a|b'). The result goes to stdout, then a line with the invocation id and the\n" +
			"receipt status. The exit status is non-zero when the result is an ERR: string.\n\n" +
			"It sends the capability token of --token, else of $CAPDIR_TOKEN, else the owner key.",
		Example: "  # the rows of the README's walk-through\n" +
			"  capdir invoke GREET Ada\n" +
			"  capdir invoke GREET Ada --json\n" +
			"  capdir invoke HEALTH --shape",
		Args: cobra.RangeArgs(1, 2),
	}
	sf := addServerFlags(cmd, 0)
	var tok string
	cmd.Flags().BoolVar(&shape, "shape", false, "build the outbound request and print it instead of sending it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's whole JSON answer")
	cmd.Flags().StringVar(&tok, "token", "", "invoke with this capability token instead of the owner key (default $CAPDIR_TOKEN)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := sf.tokenClient(tok)
		if err != nil {
			return err
		}
		body := ""
		if len(args) == 2 {
			body = args[1]
		}
		in := map[string]any{"key": args[0], "body": body, "shape": shape}
		var out json.RawMessage
		err = c.doJSON(cmd.Context(), http.MethodPost, "/api/dispatch", in, &out)
		var apiErr *apiError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
			// unknown_key: show the refusal, did_you_mean included.
			fmt.Fprintln(cmd.OutOrStdout(), string(apiErr.Body))
			return fmt.Errorf("unknown key %s", args[0])
		}
		if err != nil {
			return err
		}
		if asJSON {
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
		}
		var res struct {
			OK           *bool           `json:"ok"`
			Result       string          `json:"result"`
			Shape        json.RawMessage `json:"shape"`
			Pending      bool            `json:"pending"`
			InvocationID string          `json:"invocation_id"`
			Proof        struct {
				InvocationID string `json:"invocation_id"`
				Status       string `json:"status"`
			} `json:"proof"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("unexpected answer: %w", err)
		}
		w := cmd.OutOrStdout()
		if res.Pending {
			fmt.Fprintf(w, "%s PENDING: look it up with GET /api/receipts/%s\n", res.InvocationID, res.InvocationID)
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
		if res.OK != nil && !*res.OK {
			return fmt.Errorf("%s failed: %s", args[0], res.Proof.Status)
		}
		return nil
	}
	return cmd
}
