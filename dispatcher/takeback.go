package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// claimWait bounds the wait for the answer to a claim (a progress sent as a
// request) and for each lookup a take-back makes.
const claimWait = 2 * time.Second

// takeBack returns, ready for the workers, the requests of recs (what the held
// file says an earlier process on this data dir held when it died) that this
// process may run at once on a shared log (see held.go for when); the others are
// left to the ack wait, each logged with the reason. On a log no other node
// shares, reclaim has already handed every held request back.
func (s *Service) takeBack(ctx context.Context, cons *eventlog.Consumer, recs []heldRecord) []eventlog.Msg {
	if len(recs) == 0 || !s.sharedLog {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, claimWait)
	st, err := cons.State(lctx)
	cancel()
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: the requests an earlier process held are left to the ack wait: the dispatch consumer's state is unknown", "requests", len(recs), "err", err)
		return nil
	}
	var taken []eventlog.Msg
	claimed := map[string]bool{} // the deliveries taken: the workers holding a pack's events each recorded it
	for i := range recs {
		if recs[i].Seq <= st.AckFloor || claimed[recs[i].Reply] {
			continue // acknowledged (its receipt is in the log), or taken already
		}
		claimed[recs[i].Reply] = true
		m, err := s.takeBackOne(ctx, cons, st, &recs[i])
		if err != nil {
			s.cfg.Logger.Warn("dispatcher: a request an earlier process held is left to the ack wait", "seq", recs[i].Seq, "why", err)
			continue
		}
		taken = append(taken, eventlog.Parts(m)...)
	}
	if len(taken) > 0 {
		s.cfg.Logger.Info("dispatcher: requests an earlier process held are run again at once", "requests", len(taken), "of", len(recs))
	}
	return taken
}

// takeBackOne claims r's delivery for this process, or says why it may not.
func (s *Service) takeBackOne(ctx context.Context, cons *eventlog.Consumer, st eventlog.ConsumerState, r *heldRecord) (eventlog.Msg, error) {
	switch {
	case st.LeaderSince.IsZero():
		return nil, errors.New("the dispatch consumer has no elected leader to have held its delivery throughout")
	case !st.LeaderSince.Before(r.Since.Add(-electedSkew)):
		return nil, fmt.Errorf("the dispatch consumer elected a leader (%s) since it was delivered", st.LeaderSince.Format(time.RFC3339Nano))
	}
	lctx, cancel := context.WithTimeout(ctx, claimWait)
	defer cancel()
	m, err := s.cfg.Log.ReadDelivery(lctx, wire.DataStream, r.Seq, r.Reply, r.Delivered)
	if err != nil {
		return nil, err
	}
	if !s.beforeAckWait(r.Since, time.Now()) {
		return nil, errors.New("its ack wait may end before a claim is answered")
	}
	if err := m.Claim(lctx); err != nil {
		return nil, fmt.Errorf("the claim was not answered: %w", err)
	}
	if !s.beforeAckWait(r.Since, time.Now()) {
		return nil, errors.New("the claim was answered too late")
	}
	now, err := cons.State(lctx)
	if err != nil {
		return nil, fmt.Errorf("the dispatch consumer's state after the claim: %w", err)
	}
	if now.Leader != st.Leader || !now.LeaderSince.Equal(st.LeaderSince) {
		return nil, errors.New("the dispatch consumer elected a leader during the claim")
	}
	return m, nil
}

// beforeAckWait reports whether, at now, an ack wait begun no earlier than since
// cannot have ended, on clocks up to electedSkew apart.
func (s *Service) beforeAckWait(since, now time.Time) bool {
	return now.Add(electedSkew).Before(since.Add(s.cfg.AckWait))
}
