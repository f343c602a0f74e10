package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one timed operation; i numbers the operations of a loop from 0.
type Op func(ctx context.Context, i int) error

// Drive runs op from conc goroutines, closed loop, until n operations have been
// started or budget has elapsed (0: no limit), and returns each completed
// operation's latency and the wall time of the whole loop. The first error stops
// every goroutine and is returned.
func Drive(ctx context.Context, n, conc int, budget time.Duration, op Op) ([]time.Duration, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conc = max(1, min(conc, n))
	var next atomic.Int64
	var deadline time.Time
	if budget > 0 {
		deadline = time.Now().Add(budget)
	}
	lats := make([][]time.Duration, conc)
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < conc; g++ {
		lats[g] = make([]time.Duration, 0, n/conc+1)
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t := time.Now()
				if !deadline.IsZero() && t.After(deadline) {
					return
				}
				if err := op(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				lats[g] = append(lats[g], time.Since(t))
			}
		}(g)
	}
	wg.Wait()
	el := time.Since(start)
	if firstErr != nil {
		return nil, el, firstErr
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return all, el, ctx.Err()
}

// warmup runs op n times (at most two seconds) and discards the figures.
func warmup(ctx context.Context, n, conc int, op Op) error {
	_, _, err := Drive(ctx, n, conc, 2*time.Second, op)
	return err
}
