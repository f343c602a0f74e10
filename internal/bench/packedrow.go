package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
)

// packedRow measures the packed reference (Packed) against the one-per-message
// reference ref, both called directly, interleaved (Paired) at Parallel in
// flight, each on a connection of its own. The packed row notes its ratio to the
// reference, and both rows the messages their stream stored per invocation.
func (r *runner) packedRow(ctx context.Context, e *Env, ref *Reference, workers int) error {
	nc, err := e.Node.Log().NewConn(nats.Name("capdir-bench-packed"))
	if err != nil {
		return fmt.Errorf("bench: packed reference connection: %w", err)
	}
	defer nc.Close()
	p, err := StartPacked(ctx, nc, r.dir, workers)
	if err != nil {
		return err
	}
	defer p.Close()
	in := ", " + strconv.Itoa(Parallel) + " in flight"
	base, got, err := Paired(ctx, ScenarioReference, "reference pipeline, direct caller"+in+" (beside the packed one)",
		"packed reference pipeline (several events a message), direct caller"+in, ref.Invoke(), p.Invoke(), r.c.invokePar, Parallel, r.c.budget)
	if err != nil {
		return err
	}
	got.noteRatio(base, "the one-per-message reference", "packed_ratio")
	for _, x := range []struct {
		res         *Result
		msgs        func(context.Context) (uint64, error)
		invocations uint64
	}{{&base, ref.StreamMsgs, ref.Folded()}, {&got, p.StreamMsgs, p.Folded()}} {
		m, err := x.msgs(ctx)
		if err != nil {
			return err
		}
		if x.invocations == 0 {
			continue
		}
		per := float64(m) / float64(x.invocations)
		x.res.Note = joinNote(x.res.Note, fmt.Sprintf("%.2f stored messages per invocation", per))
		if x.res.Values == nil {
			x.res.Values = map[string]float64{}
		}
		x.res.Values["stored_per_invocation"] = per
	}
	r.add(base, got)
	return nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
