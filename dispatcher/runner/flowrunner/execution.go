package flowrunner

import (
	"context"
	"strings"
	"sync"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// execution is one run of a plan: what the steps read and what the Outcome gathers.
// Only the goroutine of Run touches it; a fan-out's branches report back to it.
type execution struct {
	r    *Runner
	sub  runner.Invoker
	args []string
	// restricted: the caller is not the owner (runner.Call.Restricted).
	restricted bool
	// vars are $PREV and the bindings made so far.
	vars map[string]string
	out  runner.Outcome
}

// run runs the steps in order and returns the flow's Outcome.
func (e *execution) run(ctx context.Context, plan *Plan) runner.Outcome {
	// Before the first step, $PREV is the flow's own input.
	e.vars = map[string]string{prevName: strings.Join(e.args, "|")}
	for _, s := range plan.Steps {
		if err := ctx.Err(); err != nil {
			return e.fail(runner.Canceled(runner.RunnerFlow, err))
		}
		var output string
		var stop error
		if s.Fanout() {
			output, stop = e.fanout(ctx, s)
		} else {
			output, stop = e.single(ctx, s)
		}
		if stop != nil {
			return e.fail(stop)
		}
		e.vars[prevName] = output
		if s.Bind != "" {
			e.vars[s.Bind] = output
		}
	}
	result := e.vars[prevName]
	if int64(len(result)) > e.r.cfg.MaxResultBytes {
		return e.fail(runner.ResultTooLarge(runner.RunnerFlow, e.r.cfg.MaxResultBytes))
	}
	e.out.Result = result
	return e.out
}

// fail completes the Outcome with the failure that stopped the flow.
func (e *execution) fail(err error) runner.Outcome {
	f := runner.FailedWith(err)
	e.out.Result, e.out.Err = f.Result, f.Err
	return e.out
}

// record adds a finished invocation to the Outcome.
func (e *execution) record(st runner.Step) {
	if st.InvocationID != "" {
		e.out.Children = append(e.out.Children, st.InvocationID)
	}
	e.out.Ran = e.out.Ran || ran(st)
	e.out.CostUSD += st.CostUSD
}

// substitute renders a step's body from the flow's arguments and variables.
func (e *execution) substitute(tmpl string) (string, error) {
	return runner.Substitute(tmpl, e.args, e.vars, runner.ModeRaw, e.r.cfg.MaxSubstitutionBytes)
}

// single runs a one-invocation step.
func (e *execution) single(ctx context.Context, s Step) (string, error) {
	body, err := e.substitute(s.Body)
	if err != nil {
		return "", err
	}
	st, err := e.sub.Invoke(ctx, s.Name, s.Key, runner.Pipe(body))
	e.record(st)
	if ctx.Err() != nil {
		// Whatever the step reported, it was cut short by the caller.
		return "", runner.Canceled(runner.RunnerFlow, ctx.Err())
	}
	if stop := e.verdict(ctx, s.Name, s.Name, s.Key, st, err); stop != nil {
		return "", stop
	}
	return st.Result, nil
}

// verdict is what stops the flow after the invocation name (of the flow's step
// step) of key returned st, err; nil when the flow goes on. A refusal of a step
// or branch that the caller's shape withholds (a row a restricted caller may not
// call) names neither the row's key nor a branch's name, which holds it: it names
// the flow's step, and the refusal with the key it ends with left out
// (ERR:flow:refused:2:scope, not ERR:flow:refused:2:scope:PB). The step's own
// receipt, the owner's, keeps the whole refusal.
func (e *execution) verdict(ctx context.Context, name, step, key string, st runner.Step, err error) *failure.Error {
	stop := verdict(name, st, err)
	if stop == nil || stop.Kind != ErrRefused || shown(ctx, e.restricted, e.sub, key) {
		return stop
	}
	return errRefused(step, strings.TrimSuffix(st.Result, ":"+key))
}

// branchResult is what one branch of a fan-out came back with.
type branchResult struct {
	st   runner.Step
	stop *failure.Error
	// own: the branch ended before the fan-out was cancelled, so its failure is
	// its own and not a consequence of a sibling's.
	own bool
}

// fanout runs the branches of s concurrently and waits for all of them. The first
// branch to fail cancels the others. Its output is the branches' outputs joined
// with "|" in branch order.
func (e *execution) fanout(ctx context.Context, s Step) (string, error) {
	// Every body is rendered before any branch starts: a branch that cannot be
	// built leaves the whole fan-out unrun.
	bodies := make([]string, len(s.Branches))
	for i, br := range s.Branches {
		var err error
		if bodies[i], err = e.substitute(br.Body); err != nil {
			return "", err
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]branchResult, len(s.Branches))
	var wg sync.WaitGroup
	for i, br := range s.Branches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := e.sub.Invoke(fctx, br.Name, br.Key, runner.Pipe(bodies[i]))
			res := branchResult{st: st, stop: e.verdict(ctx, br.Name, s.Name, br.Key, st, err), own: fctx.Err() == nil}
			if res.stop != nil {
				cancel()
			}
			results[i] = res
		}()
	}
	wg.Wait()
	return e.join(ctx, s, results)
}

// join records the branches in order and decides the fan-out's outcome: the
// caller's cancellation first, then the first branch in order that failed on its
// own, else the joined outputs (and the branches' bindings).
func (e *execution) join(ctx context.Context, s Step, results []branchResult) (string, error) {
	for _, res := range results {
		e.record(res.st)
	}
	if err := ctx.Err(); err != nil {
		return "", runner.Canceled(runner.RunnerFlow, err)
	}
	outputs := make([]string, len(results))
	for i, res := range results {
		if res.stop != nil && res.own {
			return "", res.stop
		}
		outputs[i] = res.st.Result
	}
	for i, res := range results {
		if res.stop != nil { // cancelled by a sibling that then succeeded: cannot happen
			return "", res.stop
		}
		if b := s.Branches[i].Bind; b != "" {
			e.vars[b] = outputs[i]
		}
	}
	return strings.Join(outputs, "|"), nil
}
