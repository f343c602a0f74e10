package bench

import (
	"context"
	"fmt"
	"time"
)

// pairRounds is how many alternating slices Paired takes of each operation.
const pairRounds = 8

// Paired measures a and b at conc in flight, interleaved: after a warm-up of each,
// pairRounds slices of n/pairRounds operations, one of a then one of b, so that a
// shift in the machine's load moves both alike. Each side's rate is its operations
// over the time of its own slices, its latencies those of its own operations; a
// side stops taking slices once budget (0: none) of its time has passed. The
// results are named nameA and nameB.
func Paired(ctx context.Context, scenario, nameA, nameB string, a, b Op, n, conc int, budget time.Duration) (Result, Result, error) {
	type side struct {
		name string
		op   Op
		lat  []time.Duration
		el   time.Duration
	}
	sides := []*side{{name: nameA, op: a}, {name: nameB, op: b}}
	for _, s := range sides {
		if err := warmup(ctx, max(200, n/20), conc, s.op); err != nil {
			return Result{}, Result{}, fmt.Errorf("bench: %s warm-up: %w", scenario, err)
		}
	}
	slice := max(conc, n/pairRounds)
	for range pairRounds {
		for _, s := range sides {
			if budget > 0 && s.el >= budget {
				continue
			}
			lat, el, err := Drive(ctx, slice, conc, budget-s.el, s.op)
			if err != nil {
				return Result{}, Result{}, fmt.Errorf("bench: %s: %w", scenario, err)
			}
			s.lat, s.el = append(s.lat, lat...), s.el+el
		}
	}
	res := make([]Result, 2)
	for i, s := range sides {
		res[i] = rateResult(scenario, s.name, "invocations", len(s.lat), s.el, s.lat)
	}
	return res[0], res[1], nil
}
