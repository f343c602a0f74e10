package flowrunner

import (
	"context"
	"errors"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Defaults of the bounds a Config leaves at 0.
const (
	DefaultMaxSteps  = 32
	DefaultMaxFanout = 8
)

// Config configures the flow runner.
type Config struct {
	// MaxSteps bounds the steps of one flow (a fan-out counts as one step);
	// DefaultMaxSteps when 0. A longer flow fails with ERR:flow:steps:<n>><max>
	// before any step runs.
	MaxSteps int
	// MaxFanout bounds the branches of one fan-out; DefaultMaxFanout when 0. A wider
	// fan-out fails with ERR:flow:fanout:<n>><max> before any step runs.
	MaxFanout int
	// Limits bound a flow: MaxSubstitutionBytes each step's substituted body
	// (a larger one stops the flow before that step is invoked), MaxResultBytes
	// its result (a larger last output fails it with
	// ERR:flow:result_too_large:<cap>), and Timeout the whole flow (none by
	// default: the dispatcher's run timeout bounds it).
	runner.Limits
}

func (c *Config) setDefaults() {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxFanout == 0 {
		c.MaxFanout = DefaultMaxFanout
	}
	c.Limits = c.Limits.WithDefaults(0)
}

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.MaxSteps < 0 {
		errs = append(errs, errors.New("flowrunner: Config.MaxSteps must not be negative"))
	}
	if c.MaxFanout < 0 {
		errs = append(errs, errors.New("flowrunner: Config.MaxFanout must not be negative"))
	}
	return errors.Join(append(errs, c.Limits.Validate("flowrunner"))...)
}

// Runner runs flow rows: each step is a real invocation of another row, made
// through the call's runner.Invoker (Call.Sub). It holds no state between calls
// and is safe for concurrent use.
type Runner struct {
	cfg Config
}

// New validates cfg and returns the runner.
func New(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg}, nil
}

// Check implements runner.Checker: the ERR:flow:... literal of content that does
// not parse, held to the bounds (a step without ":", unbalanced braces, too many
// steps, …), else nil. The keys its steps name are not looked up: rows may be
// written in any order.
func (r *Runner) Check(row *contract.Row) error {
	_, err := r.plan(row.Content)
	return err
}

// plan parses content held to the runner's bounds.
func (r *Runner) plan(content string) (*Plan, error) {
	return parse(content, bounds{steps: r.cfg.MaxSteps, fanout: r.cfg.MaxFanout})
}

// Run implements runner.Runner. It parses the row's content, held to the bounds,
// before invoking anything; in shape mode it returns the plan
// (runner.Shaped) and invokes nothing. Otherwise it runs the steps in order
// through c.Sub, as the package documentation describes. c.Vars is not read: a
// flow's variables are its own $PREV and bindings.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	content := ""
	if c.Row != nil {
		content = c.Row.Content
	}
	plan, err := r.plan(content)
	if err != nil {
		return runner.FailedWith(err)
	}
	if c.Shape {
		return r.shape(ctx, plan, c)
	}
	if c.Sub == nil {
		return runner.Failed(errNoInvoker())
	}
	ctx, cancel := r.cfg.Bound(ctx)
	defer cancel()
	e := &execution{r: r, sub: c.Sub, args: c.Arguments(), restricted: c.Restricted}
	return e.run(ctx, plan)
}

// shape is the plan as shape mode shows it: each body with the flow's arguments
// substituted, $PREV and bindings (known only once steps run) left as written.
// For a restricted caller (runner.Call.Restricted), a step or branch to a row it
// may not call is {"withheld":true}: its key, name and body are not shown.
func (r *Runner) shape(ctx context.Context, plan *Plan, c runner.Call) runner.Outcome {
	args := c.Arguments()
	visible := func(key string) bool { return shown(ctx, c.Restricted, c.Sub, key) }
	steps := make([]any, 0, len(plan.Steps))
	for _, s := range plan.Steps {
		var m map[string]any
		if s.Fanout() {
			branches := make([]any, 0, len(s.Branches))
			for _, br := range s.Branches {
				if !visible(br.Key) {
					branches = append(branches, withheldStep())
					continue
				}
				bm, err := r.shapeCall(br.Name, br.Key, br.Body, br.Bind, args)
				if err != nil {
					return runner.FailedWith(err)
				}
				branches = append(branches, bm)
			}
			m = map[string]any{"name": s.Name, "branches": branches}
			if s.Bind != "" {
				m["bind"] = s.Bind
			}
		} else if !visible(s.Key) {
			m = withheldStep()
		} else {
			var err error
			if m, err = r.shapeCall(s.Name, s.Key, s.Body, s.Bind, args); err != nil {
				return runner.FailedWith(err)
			}
		}
		steps = append(steps, m)
	}
	shape := map[string]any{"shape": true, "runner": runner.RunnerFlow, "steps": steps}
	return runner.Shaped(runner.RedactDeep(shape, nil).(map[string]any))
}

// shown reports whether a step or branch invoking key is shown to the caller: to
// the owner always; to a restricted caller (runner.Call.Restricted) only when sub
// lets it call the row (Invoker.Row), as the flow's contract document shows it.
func shown(ctx context.Context, restricted bool, sub runner.Invoker, key string) bool {
	if !restricted {
		return true
	}
	if sub == nil {
		return false
	}
	row, err := sub.Row(ctx, key)
	return err == nil && row != nil
}

// withheldStep is a step's place in a restricted caller's shape when the caller
// may not call its row.
func withheldStep() map[string]any { return map[string]any{"withheld": true} }

func (r *Runner) shapeCall(name, key, tmpl, bind string, args []string) (map[string]any, error) {
	body, err := runner.Substitute(tmpl, args, nil, runner.ModeRaw, r.cfg.MaxSubstitutionBytes)
	if err != nil {
		return nil, err
	}
	m := map[string]any{"name": name, "key": key, "body": body}
	if bind != "" {
		m["bind"] = bind
	}
	return m, nil
}

// ran reports whether a step's target was reached, from its receipt's status.
func ran(st runner.Step) bool {
	return st.Status == wire.StatusProvenMaterialResult || st.Status == wire.StatusRanWithError
}

// verdict is what stops a flow after a step named name returned st, err; nil
// when the flow goes on.
func verdict(name string, st runner.Step, err error) *failure.Error {
	switch {
	case err != nil:
		return errInvoke(name, err)
	case strings.HasPrefix(st.Result, "ERR:"):
		return errStepFailed(st.Result)
	case !st.OK:
		return errRefused(name, st.Result)
	}
	return nil
}
