package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FlowKey is the three-step flow row the flow scenario creates: the echo row three
// times, each step fed the previous one's output.
const FlowKey = "BENCH_FLOW3"

// flowSteps is how many steps FlowKey runs.
const flowSteps = 3

// Flow measures the three-step fn flow FlowKey against one fn invocation of its
// step row, both over POST /api/dispatch, at 1 and at par in flight. Each step is
// an invocation of its own (a request event, the gate, the runner and a receipt,
// inline in the flow's worker), so a flow costs one call and three steps. The
// flow rows' notes give what one step adds: in latency at 1 in flight, and in the
// node's time per flow at par in flight (the throughput difference, per step).
func Flow(ctx context.Context, e *Env, nSeq, nPar, par int, budget time.Duration) ([]Result, error) {
	steps := strings.TrimSuffix(strings.Repeat(EchoKey+": $PREV > ", flowSteps), " > ")
	err := e.CreateRow(ctx, map[string]any{
		"key": FlowKey, "type": "flow",
		"content": "# WHAT: the echo row three times (benchmark flow)\n" + steps,
	})
	if err != nil && !strings.Contains(err.Error(), "exists") {
		return nil, err
	}
	fn, flow := e.HTTPInvoke(), e.flowInvoke()
	var out []Result
	for _, c := range []struct{ conc, n int }{{1, nSeq}, {par, nPar}} {
		in := strconv.Itoa(c.conc) + " in flight"
		ref, err := Invocation(ctx, ScenarioFlow, "fn via POST /api/dispatch, "+in+" (reference)", fn, c.n, c.conc, budget, e.Counts)
		if err != nil {
			return nil, err
		}
		fl, err := Invocation(ctx, ScenarioFlow, "3-step fn flow via POST /api/dispatch, "+in, flow, max(1, c.n/flowSteps), c.conc, budget, e.Counts)
		if err != nil {
			return nil, err
		}
		fl.Unit = "flows"
		stepMS := ms(fl.P50-ref.P50) / flowSteps
		ratio := fl.Rate / ref.Rate
		stepUS := (1/fl.Rate - 1/ref.Rate) / flowSteps * 1e6
		if c.conc == 1 {
			fl.Note = fmt.Sprintf("%.2f× the fn rate; each step adds %.3f ms p50", ratio, stepMS)
		} else {
			fl.Note = fmt.Sprintf("%.2f× the fn rate; each step costs %.0f µs of node time", ratio, stepUS)
		}
		fl.Values = map[string]float64{"rate_ratio": ratio, "step_p50_ms": stepMS, "step_node_us": stepUS}
		out = append(out, ref, fl)
	}
	return out, nil
}

// flowInvoke returns an Op that invokes FlowKey and checks its result: the echo of
// the flow's body through every step.
func (e *Env) flowInvoke() Op {
	want := []byte(`"result":"` + EchoBody + `"`)
	return func(ctx context.Context, i int) error {
		out, err := e.Dispatch(ctx, FlowKey, EchoBody, http.StatusOK)
		if err != nil {
			return err
		}
		if !bytes.Contains(out, want) {
			return fmt.Errorf("bench: flow %d: unexpected answer %s", i, out)
		}
		return nil
	}
}
