package capdir

import (
	"errors"
	"fmt"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
)

// ComposeConfig configures the runners that compose other rows: flow rows and
// agent rows. Their steps run through the dispatcher (see dispatcher.Service): a
// node registers both runners.
type ComposeConfig struct {
	// AgentProviders routes model ids to OpenAI-compatible servers: PREFIX=BASE_URL
	// entries, each element possibly comma-separated (agentrunner.ParseProviders;
	// capdir serve --agent-provider, CAPDIR_AGENT_PROVIDERS). None: every agent
	// call fails with ERR:agent:no_provider:<model>.
	AgentProviders []string
	// AgentPrices prices model tokens: MODEL=IN/OUT in USD per million tokens
	// (agentrunner.ParsePrices; --agent-price). An unpriced model costs 0.
	AgentPrices []string
	// Agent configures the agent runner (MaxSteps, Timeout, MaxResultBytes, ...).
	// Start sets its Providers and Prices (parsed from AgentProviders and
	// AgentPrices), Env and TagSalt.
	Agent agentrunner.Config
	// Flow configures the flow runner (MaxFanout, MaxSteps, ...). How deep steps
	// nest, flows in flows and agents' tools, is Config.Dispatch.MaxDepth.
	Flow flowrunner.Config
}

// Validate reports every problem at once, naming the capdir serve flag of each.
func (c ComposeConfig) Validate() error {
	var errs []error
	if _, err := agentrunner.ParseProviders(c.AgentProviders); err != nil {
		errs = append(errs, fmt.Errorf("--agent-provider (or CAPDIR_AGENT_PROVIDERS): %w", err))
	}
	if _, err := agentrunner.ParsePrices(c.AgentPrices); err != nil {
		errs = append(errs, fmt.Errorf("--agent-price: %w", err))
	}
	if err := c.Agent.ValidateBounds(); err != nil {
		errs = append(errs, fmt.Errorf("agent rows (--agent-step-limit): %w", err))
	}
	if err := c.Flow.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("flow rows (--flow-max-fanout): %w", err))
	}
	return errors.Join(errs...)
}

// composers builds the flow and agent runners of a node (Start has validated c).
// env is the guarded environment every runner reads credentials through; salt
// keys credential tags.
func composers(c ComposeConfig, env runner.Env, salt string) (runner.Runners, error) {
	providers, err := agentrunner.ParseProviders(c.AgentProviders)
	if err != nil {
		return nil, fmt.Errorf("node: --agent-provider: %w", err)
	}
	prices, err := agentrunner.ParsePrices(c.AgentPrices)
	if err != nil {
		return nil, fmt.Errorf("node: --agent-price: %w", err)
	}
	a := c.Agent
	a.Providers, a.Prices, a.Env, a.TagSalt = providers, prices, env, salt
	agent, err := agentrunner.New(a)
	if err != nil {
		return nil, err
	}
	flow, err := flowrunner.New(c.Flow)
	if err != nil {
		return nil, err
	}
	return runner.Runners{runner.RunnerFlow: flow, agentrunner.RunnerAgent: agent}, nil
}

// withRunners is rs with the runners of more added (more wins on a name).
func withRunners(rs, more runner.Runners) runner.Runners {
	for name, r := range more {
		rs[name] = r
	}
	return rs
}
