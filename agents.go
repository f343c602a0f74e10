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
	// AgentStepLimit bounds the model requests of one agent call
	// (agentrunner.DefaultMaxSteps when 0).
	AgentStepLimit int
	// FlowMaxDepth bounds how deep steps nest, flows in flows and agents' tools
	// (dispatcher.DefaultMaxDepth when 0).
	FlowMaxDepth int
	// FlowMaxFanout bounds the branches of one fan-out of a flow
	// (flowrunner.DefaultMaxFanout when 0).
	FlowMaxFanout int
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
	for _, b := range []struct {
		flag string
		v    int
	}{{"--agent-step-limit", c.AgentStepLimit}, {"--flow-max-depth", c.FlowMaxDepth}, {"--flow-max-fanout", c.FlowMaxFanout}} {
		if b.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d: give a number of 1 or more (0 for the default)", b.flag, b.v))
		}
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
	agent, err := agentrunner.New(agentrunner.Config{
		Providers: providers, Prices: prices, Env: env, MaxSteps: c.AgentStepLimit, TagSalt: salt,
	})
	if err != nil {
		return nil, err
	}
	flow, err := flowrunner.New(flowrunner.Config{MaxFanout: c.FlowMaxFanout})
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
