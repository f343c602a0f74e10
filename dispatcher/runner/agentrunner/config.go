package agentrunner

import (
	"errors"
	"net/http"
	"time"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Agent runner defaults.
const (
	// DefaultTimeout bounds one model request, response included.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxSteps is how many model requests one call may make.
	DefaultMaxSteps = 8
	// DefaultMaxResponseBytes caps one model response body.
	DefaultMaxResponseBytes = 4 << 20 // 4 MiB
	// DefaultMaxToolCalls is how many tools one model answer may call: with
	// DefaultMaxSteps, fewer than the dispatcher's DefaultMaxTreeSteps in all.
	DefaultMaxToolCalls = 128
	// DefaultMaxRequestBytes caps one model request body: the conversation so far.
	DefaultMaxRequestBytes = 16 << 20 // 16 MiB
)

// Config configures the agent runner.
type Config struct {
	// Providers routes a model id to its OpenAI-compatible server (ParseProviders).
	// A model no entry matches fails with ERR:agent:no_provider:<model>.
	Providers Providers
	// Prices gives Outcome.CostUSD (ParsePrices); a model without a price costs 0.
	Prices Prices
	// Env resolves the environment variables the auth column names; required (the
	// same guarded Env the http runner gets: runner.SecretEnv.Guard).
	Env runner.Env
	// Client sends the model requests; http.DefaultClient's transport when nil. The
	// runner sends through a copy that follows no redirect (a credential stays on
	// the provider's URL); Client itself is not modified.
	Client *http.Client
	// MaxSteps bounds the model requests of one call; DefaultMaxSteps when 0. A
	// model still calling tools in its last allowed answer fails the call with
	// ERR:agent:step_limit:<MaxSteps>.
	MaxSteps int
	// MaxToolCalls bounds the tool calls of one model answer; DefaultMaxToolCalls
	// when 0. An answer calling more fails the call with
	// ERR:agent:tool_calls:<n>><max>, and none of its tools run: each tool call is
	// an invocation the log records, and a 4 MiB answer could hold tens of
	// thousands.
	MaxToolCalls int
	// MaxRequestBytes caps one model request body, which holds the conversation
	// so far, every tool result included; DefaultMaxRequestBytes when 0. A
	// conversation past it fails the call with ERR:agent:request_too_large:<cap>,
	// and the tools after the result that took it past do not run: tool results
	// of up to a tool's result cap each would otherwise make it any size.
	MaxRequestBytes int64
	// MaxResponseBytes caps one model response body; DefaultMaxResponseBytes when
	// 0. A larger one fails the call with ERR:agent:response_too_large:<cap>.
	MaxResponseBytes int64
	// Limits bound a call: Timeout one model request (DefaultTimeout when 0),
	// MaxResultBytes the final answer (a larger one fails the call with
	// ERR:agent:result_too_large:<cap>). The runner substitutes nothing.
	runner.Limits
	// TagSalt keys runner.Outcome.CredTag (see runner.Credential.Tag).
	TagSalt string
}

func (c *Config) setDefaults() {
	if c.Client == nil {
		c.Client = &http.Client{Transport: http.DefaultTransport}
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxToolCalls == 0 {
		c.MaxToolCalls = DefaultMaxToolCalls
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	c.Limits = c.Limits.WithDefaults(DefaultTimeout)
}

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Env == nil {
		errs = append(errs, errors.New("agentrunner: Config.Env is required"))
	}
	return errors.Join(append(errs, c.ValidateBounds())...)
}

// ValidateBounds reports every problem with c's bounds (Limits, MaxSteps,
// MaxToolCalls, MaxRequestBytes, MaxResponseBytes), joined: what Validate checks apart from the wiring (Env),
// so that a node checks its settings before it creates anything.
func (c Config) ValidateBounds() error {
	var errs []error
	if c.MaxSteps < 0 {
		errs = append(errs, errors.New("agentrunner: Config.MaxSteps must not be negative"))
	}
	if c.MaxToolCalls < 0 {
		errs = append(errs, errors.New("agentrunner: Config.MaxToolCalls must not be negative"))
	}
	if c.MaxRequestBytes < 0 {
		errs = append(errs, errors.New("agentrunner: Config.MaxRequestBytes must not be negative"))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, errors.New("agentrunner: Config.MaxResponseBytes must not be negative"))
	}
	return errors.Join(append(errs, c.Limits.Validate("agentrunner"))...)
}

// Runner runs agent rows; see the package documentation. It is safe for
// concurrent use.
type Runner struct {
	cfg    Config
	client *http.Client // cfg.Client, following no redirect
}

// New validates cfg and returns the runner.
func New(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client := *cfg.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Runner{cfg: cfg, client: &client}, nil
}
