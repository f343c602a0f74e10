package dispatcher

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
)

// An acknowledged invocation never runs twice. A request that may have run
// already (redelivered; appended before this process started; delivered long
// after it was stored; stored before the dispatch consumer last changed leader;
// or under a chosen invocation id an earlier request holds) is looked up in this
// node's projection before it runs, and the look is worth something only once
// the projection has caught up with the log: a receipt another node appended a
// moment ago must be seen. So the worker waits for it (settled). While the
// projection cannot catch up (the log electing a leader, a pull lost with a
// server) the request is held in progress and the wait tried again: it is never
// run against a lagging projection. Only a drain, a stop, or a projector that
// has failed for good hands it back unrun.
//
// A consumer whose leader changes may lose what the old leader delivered and had
// not yet replicated: the new leader delivers those requests again as first
// deliveries, possibly a moment after another node ran them and appended their
// receipts. The service watches the consumer's leader elections, and every
// request stored before the last one it saw is checked (electedSince).

// settleRetryMax bounds the pause between two waits for the projection (each
// bounded by the projection wait, projector.Settings.Wait).
const settleRetryMax = 2 * time.Second

// settled runs settle (a wait for this node's projection) until it succeeds, and
// reports whether it did; false when ctx ends, the service drains, or the
// projector has failed for good (the log behind it, a damaged file, closed).
// Between tries m is kept in progress, so JetStream does not deliver it elsewhere
// meanwhile; each failure is logged.
func (s *Service) settled(ctx context.Context, m eventlog.Msg, inv string, settle func(context.Context) error) bool {
	for wait := receiptRetryFirst; ; wait = min(2*wait, settleRetryMax) {
		sctx, cancel := s.cfg.Projector.WaitContext(ctx)
		err := settle(sctx)
		cancel()
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil, errors.Is(err, projector.ErrLogBehind), errors.Is(err, projector.ErrDamaged), errors.Is(err, projector.ErrClosed):
			return false
		}
		s.cfg.Logger.Warn("dispatcher: a request that may have run already waits until this node's projection has caught up with the log, to look for its receipt; not run meanwhile",
			"invocation", inv, "retry_in", wait, "err", err)
		m.InProgress()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		case <-s.draining:
			t.Stop()
			return false
		}
	}
}

// electedSkew widens the window of requests checked after a leader election, for
// clocks of the servers that differ from this node's.
const electedSkew = 2 * time.Second

// leaderElections records when this node last heard that the dispatch consumer
// elected a leader (JetStream's advisory): every request stored before it may
// have been delivered by the old leader. It is zero until the first election.
type leaderElections struct {
	at      atomic.Int64 // Unix nanoseconds, electedSkew added
	unwatch func()
}

// watch subscribes to the consumer's leader elections. A connection that may not
// subscribe to advisories watches nothing: the other checks still hold.
func (e *leaderElections) watch(c *eventlog.Consumer) error {
	stop, err := c.WatchLeader(func() {
		e.at.Store(time.Now().Add(electedSkew).UnixNano())
	})
	e.unwatch = stop
	return err
}

func (e *leaderElections) stop() {
	if e.unwatch != nil {
		e.unwatch()
	}
}

// electedSince reports whether a request stored at stored was stored before the
// last leader election this node heard of.
func (e *leaderElections) electedSince(stored time.Time) bool {
	at := e.at.Load()
	return at != 0 && stored.UnixNano() < at
}
