package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(tokenCmd) }

// tokenCmd is `capdir token mint|revoke`: the owner's capability-token routes.
func tokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Mint or revoke capability tokens on a running capdir server (owner key)",
		Long: "A capability token lets a caller other than the owner invoke rows: the keys and categories it names,\n" +
			"up to its risk ceiling, for a short time (60s unless --ttl says otherwise, at most 1h). It can never write\n" +
			"the directory, mint or revoke. Callers present it as Authorization: Bearer <token>, with capdir invoke --token,\n" +
			"or in the token field of a request on the bus. These commands talk to a running server with the owner key.",
	}
	cmd.AddCommand(tokenMintCmd(), tokenRevokeCmd())
	return cmd
}

func tokenMintCmd() *cobra.Command {
	var (
		in         struct{ sub, risk, pin, body string }
		keys, cats []string
		maxPayload int
		ttl        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "mint --sub NAME --key KEY [--key KEY2] [--category CAT] [--risk low|high] [--pin FP|current] [--body B] [--max-payload N] [--ttl 60s]",
		Short: "Mint a capability token (POST /api/tokens): the token on stdout, its id and expiry on stderr",
		Example: "  capdir token mint --sub billing-agent --key GREET\n" +
			"  capdir token mint --sub ci --category demo --ttl 10m\n" +
			"  capdir token mint --sub ci --key GREET --pin current --body Ada\n" +
			"  CAPDIR_TOKEN=$(capdir token mint --sub ci --key GREET) capdir invoke GREET Ada",
		Args: cobra.NoArgs,
	}
	sf := addServerFlags(cmd, 30*time.Second)
	f := cmd.Flags()
	f.StringVar(&in.sub, "sub", "", "who holds the token (its receipts' actor is token:<sub>); never the owner")
	f.StringArrayVar(&keys, "key", nil, "a row key the token may invoke (repeatable)")
	f.StringArrayVar(&cats, "category", nil, "a category whose rows the token may invoke (repeatable)")
	f.StringVar(&in.risk, "risk", "low", "risk ceiling: low, or high to invoke rows marked sensitive")
	f.StringVar(&in.pin, "pin", "", `the contract fingerprint the one --key row must keep, or "current" for its contract now`)
	f.StringVar(&in.body, "body", "", "the only body the token may send (given empty: only the empty body)")
	f.IntVar(&maxPayload, "max-payload", 0, "the largest body the token may send, in bytes (0: the deployment's ceiling)")
	f.DurationVar(&ttl, "ttl", 0, "lifetime, whole seconds (default 60s, at most 1h)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if in.sub == "" {
			return errors.New("--sub is required: name the token's holder")
		}
		if len(keys) == 0 && len(cats) == 0 {
			return errors.New("give at least one --key or --category: the rows the token may invoke")
		}
		if ttl < 0 || ttl%time.Second != 0 {
			return fmt.Errorf("--ttl %v: give a whole number of seconds, such as 60s or 10m", ttl)
		}
		req := map[string]any{
			"sub": in.sub, "scope": map[string][]string{"keys": keys, "categories": cats}, "risk": in.risk,
			"pin": in.pin, "max_payload": maxPayload, "ttl_seconds": int64(ttl / time.Second),
		}
		if cmd.Flags().Changed("body") {
			req["body"] = in.body
		}
		c, err := sf.client()
		if err != nil {
			return err
		}
		var out struct {
			Token string `json:"token"`
			JTI   string `json:"jti"`
			Exp   int64  `json:"exp"`
		}
		if err := c.doJSON(cmd.Context(), http.MethodPost, "/api/tokens", req, &out); err != nil {
			return err
		}
		if out.Token == "" {
			return errors.New("POST /api/tokens: the server sent no token")
		}
		fmt.Fprintln(cmd.OutOrStdout(), out.Token)
		fmt.Fprintf(cmd.ErrOrStderr(), "jti %s expires %s (revoke: capdir token revoke %s)\n",
			out.JTI, time.Unix(out.Exp, 0).UTC().Format(time.RFC3339), out.JTI)
		return nil
	}
	return cmd
}

func tokenRevokeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke JTI",
		Short: "Revoke a capability token (DELETE /api/tokens/JTI appends TOKEN_REVOKED); every node refuses it from then on",
		Args:  cobra.ExactArgs(1),
	}
	sf := addServerFlags(cmd, 30*time.Second)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := sf.client()
		if err != nil {
			return err
		}
		var out struct {
			JTI     string `json:"jti"`
			Revoked bool   `json:"revoked"`
		}
		if err := c.doJSON(cmd.Context(), http.MethodDelete, "/api/tokens/"+url.PathEscape(args[0]), nil, &out); err != nil {
			return err
		}
		if !out.Revoked {
			return fmt.Errorf("the server did not confirm the revocation of %s", args[0])
		}
		fmt.Fprintf(cmd.OutOrStdout(), "token %s revoked\n", out.JTI)
		return nil
	}
	return cmd
}

// tokenClient is a client that presents the capability token tok, else the one in
// $CAPDIR_TOKEN, else (neither set) the owner key as client() resolves it.
func (sf *serverFlags) tokenClient(tok string) (*apiClient, error) {
	source := "--token"
	if tok == "" {
		tok, source = strings.TrimSpace(os.Getenv("CAPDIR_TOKEN")), "the environment variable CAPDIR_TOKEN"
	}
	if tok == "" {
		return sf.client()
	}
	c := newAPIClient(sf.server, "", sf.timeout)
	c.token, c.tokenSource = strings.TrimSpace(tok), source
	return c, nil
}
