package dispatcher

import (
	"context"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// invocationBefore is what the projection holds of invocation id inv once it
// has folded everything the data stream held before seq, the sequence of a
// request under inv sent by client ("" for capdir's own subject). When this
// node's projector has read that far and holds no request under inv before
// seq still to commit, it is read at once (projector.InvocationBefore): a
// request's look-up waits for a commit only when an earlier request under its
// id is in the batch being folded or has no receipt folded, or the projector
// has not read up to it in the projection wait (a wait
// capdir_bus_id_waits_total counts for a bus client's). looked is
// false when the projection could not be brought up to the request (see
// settled): m must not run now.
func (s *Service) invocationBefore(ctx context.Context, m eventlog.Msg, inv, client string, seq uint64) (first projector.Invocation, looked bool, err error) {
	if seq <= 1 || s.cfg.Projector.Applied(wire.DataStream) >= seq-1 {
		first, err = s.cfg.Projector.Invocation(inv)
		return first, true, err
	}
	if first, known, err := s.cfg.Projector.InvocationBefore(ctx, inv, seq); known && answersBefore(&first, err, seq) {
		return first, true, err
	}
	if client != "" {
		s.cfg.Metrics.idWaits.Inc()
	}
	wait := func(ctx context.Context) error { return s.cfg.Projector.WaitFor(ctx, wire.DataStream, seq-1) }
	if !s.settled(ctx, m, inv, wait) {
		return projector.Invocation{}, false, nil
	}
	first, err = s.cfg.Projector.Invocation(inv)
	return first, true, err
}

// answersBefore reports whether first (err), what projector.InvocationBefore
// answered known for a request under its id at seq, is the answer once the
// projection has folded up to seq-1: no earlier request, or one with its
// receipt. An earlier request without a receipt committed is looked up again
// once folded up to seq-1: its receipt may be read and not yet committed, and a
// repeat is answered with it.
func answersBefore(first *projector.Invocation, err error, seq uint64) bool {
	return err != nil || first.Seq == 0 || first.Seq >= seq || first.Receipt != nil
}
