package projector

import (
	"context"
	"slices"

	"github.com/capdir/capdir/eventlog"
)

// foldRange folds stream's events from..to as a catch-up does, in three stages on
// three goroutines, each batch through them in order: the log's reader hands the
// batches over (its own goroutine decodes the envelopes meanwhile), the preparer
// does what each event's fold needs of the event alone (prepare.go), and the
// applier folds and commits them, one transaction a batch, as apply does. So on
// two cores the next batch is read and prepared while one commits. At most one
// batch waits between two stages.
func (p *Projector) foldRange(ctx context.Context, stream string, from, to uint64, opts eventlog.FollowOptions, progress Progress) error {
	type job struct {
		batch []eventlog.Stored
		pre   []prepared
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepc := make(chan job, 1)
	applyc := make(chan job, 1)
	applied := make(chan error, 1)
	go func() {
		defer close(applyc)
		for j := range prepc {
			prepare(j.batch, j.pre)
			select {
			case applyc <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		var err error
		for j := range applyc {
			if err != nil {
				continue // the first error stands; the rest is dropped
			}
			if err = p.apply(stream, j.batch, j.pre); err != nil {
				cancel()
				continue
			}
			if progress != nil {
				progress(stream, j.batch[len(j.batch)-1].Seq, to)
			}
		}
		applied <- err
	}()
	rerr := p.cfg.Log.ReadRangeWith(ctx, stream, from, to, opts, func(b []eventlog.Stored) error {
		// The reader reuses b for its next batch.
		j := job{batch: slices.Clone(b), pre: make([]prepared, len(b))}
		select {
		case prepc <- j:
		case <-ctx.Done(): // the reader returns at once, as it does when ctx ends
		}
		return nil
	})
	close(prepc)
	if err := <-applied; err != nil {
		return err
	}
	return rerr
}
