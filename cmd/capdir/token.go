package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/capdir/capdir/api/client"
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

// tokenMintConfig is what capdir token mint does.
type tokenMintConfig struct {
	serverConfig
	Sub              string
	Keys, Categories []string
	Risk, Pin        string
	Body             *string // the only body the token may send; nil: any
	MaxPayload       int
	TTL              time.Duration // whole seconds; 0: the server's default
	Out, Err         io.Writer     // the token; its id and expiry
}

func tokenMintCmd() *cobra.Command {
	var (
		cfg  tokenMintConfig
		body string
	)
	cmd := &cobra.Command{
		Use:   "mint --sub NAME --key KEY [--key KEY2] [--category CAT] [--risk low|high] [--pin FP|current] [--body B] [--max-payload N] [--ttl 60s]",
		Short: "Mint a capability token (POST /api/tokens): the token on stdout, its id and expiry on stderr",
		Example: "  capdir token mint --sub billing-agent --key GREET\n" +
			"  capdir token mint --sub ci --category demo --ttl 10m\n" +
			"  capdir token mint --sub ci --key GREET --pin current --body Ada\n" +
			"  CAPDIR_TOKEN=$(capdir token mint --sub ci --key GREET) capdir invoke GREET Ada",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out, cfg.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if cmd.Flags().Changed("body") {
				cfg.Body = &body
			}
			return runTokenMint(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	f := cmd.Flags()
	f.StringVar(&cfg.Sub, "sub", "", "who holds the token (its receipts' actor is token:<sub>); never the owner")
	f.StringArrayVar(&cfg.Keys, "key", nil, "a row key the token may invoke (repeatable)")
	f.StringArrayVar(&cfg.Categories, "category", nil, "a category whose rows the token may invoke (repeatable)")
	f.StringVar(&cfg.Risk, "risk", "low", "risk ceiling: low, or high to invoke rows marked sensitive")
	f.StringVar(&cfg.Pin, "pin", "", `the contract fingerprint the one --key row must keep, or "current" for its contract now`)
	f.StringVar(&body, "body", "", "the only body the token may send (given empty: only the empty body)")
	f.IntVar(&cfg.MaxPayload, "max-payload", 0, "the largest body the token may send, in bytes (0: the deployment's ceiling)")
	f.DurationVar(&cfg.TTL, "ttl", 0, "lifetime, whole seconds (default 60s, at most 1h)")
	return cmd
}

// runTokenMint mints a token and prints it on Out, and its id and expiry on Err.
func runTokenMint(ctx context.Context, cfg tokenMintConfig) error {
	if cfg.Sub == "" {
		return errors.New("--sub is required: name the token's holder")
	}
	if len(cfg.Keys) == 0 && len(cfg.Categories) == 0 {
		return errors.New("give at least one --key or --category: the rows the token may invoke")
	}
	if cfg.TTL < 0 || cfg.TTL%time.Second != 0 {
		return fmt.Errorf("--ttl %v: give a whole number of seconds, such as 60s or 10m", cfg.TTL)
	}
	c, err := cfg.client()
	if err != nil {
		return err
	}
	tok, err := c.MintToken(ctx, client.MintRequest{
		Sub: cfg.Sub, Scope: client.TokenScope{Keys: cfg.Keys, Categories: cfg.Categories}, Risk: cfg.Risk,
		Pin: cfg.Pin, Body: cfg.Body, MaxPayload: cfg.MaxPayload, TTLSeconds: int64(cfg.TTL / time.Second),
	})
	if err != nil {
		return c.explain(err)
	}
	fmt.Fprintln(cfg.Out, tok.Token)
	fmt.Fprintf(cfg.Err, "jti %s expires %s (revoke: capdir token revoke %s)\n",
		tok.JTI, time.Unix(tok.Exp, 0).UTC().Format(time.RFC3339), tok.JTI)
	return nil
}

// tokenRevokeConfig is what capdir token revoke does.
type tokenRevokeConfig struct {
	serverConfig
	JTI string
	Out io.Writer
}

func tokenRevokeCmd() *cobra.Command {
	var cfg tokenRevokeConfig
	cmd := &cobra.Command{
		Use:   "revoke JTI",
		Short: "Revoke a capability token (DELETE /api/tokens/JTI appends TOKEN_REVOKED); every node refuses it from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.JTI, cfg.Out = args[0], cmd.OutOrStdout()
			return runTokenRevoke(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Second)
	return cmd
}

// runTokenRevoke revokes the token cfg.JTI and says so once the server has folded it.
func runTokenRevoke(ctx context.Context, cfg tokenRevokeConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	if err := c.RevokeToken(ctx, cfg.JTI); err != nil {
		return c.explain(err)
	}
	fmt.Fprintf(cfg.Out, "token %s revoked\n", cfg.JTI)
	return nil
}
