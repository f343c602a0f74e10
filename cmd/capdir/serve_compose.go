package main

import (
	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/spf13/cobra"
)

// agentProvidersEnv is read for the provider table when --agent-provider is not
// given.
const agentProvidersEnv = "CAPDIR_AGENT_PROVIDERS"

// composeFlags registers serve's flags for flow and agent rows on cmd.
func composeFlags(cmd *cobra.Command, c *capdir.Config) {
	f := cmd.Flags()
	f.StringArrayVar(&c.AgentProviders, "agent-provider", nil,
		"where agent rows' models go: PREFIX=BASE_URL of an OpenAI-compatible API (the longest matching prefix of the model id wins; * matches any; a prefix ending in ':' is removed from the model id sent); repeatable or comma-separated; $"+agentProvidersEnv+" when not given")
	f.StringArrayVar(&c.AgentPrices, "agent-price", nil,
		"token prices for agent rows' cost: MODEL=IN/OUT in USD per million input/output tokens (MODEL exact, PREFIX* or *); repeatable or comma-separated")
	f.IntVar(&c.Agent.MaxSteps, "agent-step-limit", agentrunner.DefaultMaxSteps, "model requests one agent call may make")
	f.IntVar(&c.Dispatch.MaxDepth, "flow-max-depth", dispatcher.DefaultMaxDepth, "how deep steps may nest (a flow's steps are at depth 1, a step of a flow called by a flow at 2, …)")
	f.IntVar(&c.Flow.MaxFanout, "flow-max-fanout", flowrunner.DefaultMaxFanout, "branches one fan-out of a flow may have")
}

// agentProviders is the provider table serve runs with: --agent-provider when
// given, else $CAPDIR_AGENT_PROVIDERS when set, else none.
func agentProviders(flagGiven bool, fromFlag []string, lookup func(string) (string, bool)) []string {
	if flagGiven {
		return fromFlag
	}
	if v, ok := lookup(agentProvidersEnv); ok {
		return []string{v}
	}
	return fromFlag
}
