package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The environment serve reads, by the names its code looks up.
const (
	dataDirEnv     = "CAPDIR_DATA"
	terminalKeyEnv = "CAPDIR_TERMINAL_KEY"
	secretEnvEnv   = "CAPDIR_SECRET_ENV"
)

// serveEnv is every environment variable serve reads, as --help lists them.
var serveEnv = []struct{ name, what string }{
	{dataDirEnv, "the data directory when --data is not given (default ./capdir-data)"},
	{terminalKeyEnv, "the owner key clients send as x-terminal-key; when unset, the key in\n" +
		"<data>/terminal.key, generated (mode 0600) on first start"},
	{secretEnvEnv, "the environment variables rows may name in auth when --secret-env is not\n" +
		"given (NAME, PREFIX*, *SUFFIX or *, comma-separated; empty allows none)"},
	{agentProvidersEnv, "the agent providers (PREFIX=BASE_URL,…) when --agent-provider is not given"},
}

// envHelp is the Environment section of serve --help, from serveEnv.
func envHelp() string {
	width := 0
	for _, e := range serveEnv {
		width = max(width, len(e.name))
	}
	var b strings.Builder
	b.WriteString("Environment:\n")
	for _, e := range serveEnv {
		indent := "\n  " + strings.Repeat(" ", width+2)
		fmt.Fprintf(&b, "  %-*s  %s\n", width, e.name, strings.ReplaceAll(e.what, "\n", indent))
	}
	return b.String()
}

// flagGroup is a heading of a command's --help and the flags under it, in order.
type flagGroup struct {
	title string
	flags []string
}

// serveFlagGroups orders serve's flags under headings; a flag in none of them
// (--help) is listed last, under "Other flags".
var serveFlagGroups = []flagGroup{
	{"Listeners", []string{"http", "public-url", "console", "nats-listen"}},
	{"Log and projection", []string{"data", "sync", "data-retention", "data-max-bytes", "log-compression", "log-group-commit", "log-pack", "projection-fsync", "projection-linger"}},
	{"Cluster (an existing NATS cluster instead of the embedded server)", []string{"nats-url", "nats-creds", "replicas"}},
	{"Dispatch", []string{"workers", "max-calls", "ack-wait", "approval-ttl", "breaker-threshold", "breaker-cooldown", "breaker-quorum", "zone", "shutdown-timeout"}},
	{"HTTP runner", []string{"http-timeout", "http-max-per-origin"}},
	{"MCP upstreams", []string{"mcp-http", "mcp-stdio", "mcp-timeout", "mcp-relist"}},
	{"Agents and flows", []string{"agent-provider", "agent-price", "agent-step-limit", "flow-max-depth", "flow-max-fanout"}},
	{"HTTP server limits", []string{"http-read-header-timeout", "http-read-timeout", "http-write-timeout", "http-idle-timeout",
		"http-max-header-bytes", "max-imports", "max-import-bytes"}},
	{"Security", []string{"secret-env", "token-key", "token-audience"}},
	{"Receipt ledger", []string{"ledger-origin", "checkpoint-every"}},
	{"Logging and tracing", []string{"log-level", "otel-endpoint"}},
}

// groupedUsage is a usage function listing cmd's flags under groups' headings.
func groupedUsage(groups []flagGroup) func(*cobra.Command) error {
	return func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		if c.HasExample() {
			fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
		}
		placed := map[string]bool{}
		for _, g := range groups {
			fs := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
			fs.SortFlags = false // the group's order
			for _, name := range g.flags {
				if f := c.Flags().Lookup(name); f != nil {
					fs.AddFlag(f)
					placed[name] = true
				}
			}
			if fs.HasFlags() {
				fmt.Fprintf(w, "\n%s:\n%s", g.title, fs.FlagUsages())
			}
		}
		rest := pflag.NewFlagSet("other", pflag.ContinueOnError)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !placed[f.Name] {
				rest.AddFlag(f)
			}
		})
		if rest.HasFlags() {
			fmt.Fprintf(w, "\nOther flags:\n%s", rest.FlagUsages())
		}
		return nil
	}
}
