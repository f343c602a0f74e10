package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamState is what the log says about one of its streams: which stream it is and
// which sequences it holds.
type StreamState struct {
	// Stream is the stream's name.
	Stream string
	// Created is when the stream was created. It survives restarts and configuration
	// updates; a stream deleted and created again under the same name has a new one:
	// it is another log, whose sequences start again from 1.
	Created time.Time
	// FirstSeq and LastSeq bound the sequences the stream holds. While the stream
	// lives LastSeq never goes down, even when retention (DataMaxAge) removes every
	// message; FirstSeq rises as retention removes old ones.
	FirstSeq, LastSeq uint64
	// Replicated: the stream has replicas on other servers, so a state can come
	// from one that is behind (see Log.Holds).
	Replicated bool
}

// State asks the log for the stream's state. It returns an error wrapping
// ErrStreamNotFound when the stream does not exist (it was deleted under the log).
//
// On a cluster, only the stream's leader answers, except while the stream has
// none: then every replica answers with its own state, and a replica may not
// have stored yet what the leader it lost had acknowledged, so its LastSeq can be
// below a sequence already handed out and read. Such an answer is not the log's:
// State asks again until a leader answers, for up to Config.ElectionWait, then
// returns an error wrapping ErrElecting.
func (l *Log) State(ctx context.Context, stream string) (StreamState, error) {
	return l.settledState(ctx, stream, 0)
}

// Holds is State for a reader that has read the stream up to seq and asks
// whether the log still holds it. On a replicated stream an answer below seq is
// not taken at its word: a leader elected a moment ago can answer before it has
// applied every entry its predecessor acknowledged. Holds asks again, every
// electionRetryWait for up to Config.ElectionWait in all (the wait for a leader
// included), and returns the first leader's state that reaches seq, or the last
// leader's state when none does: a log that really lost what was read stays
// behind, one that was only electing catches up. When no leader answered last,
// it is State's ErrElecting.
func (l *Log) Holds(ctx context.Context, stream string, seq uint64) (StreamState, error) {
	return l.settledState(ctx, stream, seq)
}

// settledState is the one loop of State and Holds: it asks for the stream's
// state every electionRetryWait until a leader answers with one that holds seq
// (any state, on a stream without replicas), under one deadline,
// Config.ElectionWait from the first ask. Past it, the last answer is returned
// when a leader gave it, else ErrElecting.
func (l *Log) settledState(ctx context.Context, stream string, seq uint64) (StreamState, error) {
	s, ok := l.streams[stream]
	if !ok {
		return StreamState{}, fmt.Errorf("eventlog: unknown stream %q", stream)
	}
	until := time.Now().Add(l.cfg.ElectionWait)
	for {
		l.restart.RLock()
		info, err := s.Info(ctx)
		l.restart.RUnlock()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return StreamState{}, fmt.Errorf("%w: %s", ErrStreamNotFound, stream)
		}
		if err != nil {
			return StreamState{}, fmt.Errorf("eventlog: stream info %s: %w", stream, err)
		}
		st := StreamState{Stream: stream, Created: info.Created, FirstSeq: info.State.FirstSeq, LastSeq: info.State.LastSeq,
			Replicated: info.Cluster != nil && len(info.Cluster.Replicas) > 0}
		leader := info.Cluster == nil || info.Cluster.Leader != ""
		if leader && (st.LastSeq >= seq || !st.Replicated) {
			return st, nil
		}
		if !time.Now().Before(until) {
			if leader {
				return st, nil // behind once the wait is over: the log's own answer
			}
			return StreamState{}, fmt.Errorf("%w: stream %s had no leader for %s; only a replica answered, with its own state (last sequence %d), which may be behind the log's: ask again in a few seconds",
				ErrElecting, stream, l.cfg.ElectionWait, info.State.LastSeq)
		}
		select {
		case <-ctx.Done():
			if leader {
				return st, fmt.Errorf("eventlog: stream info %s: %w", stream, ctx.Err())
			}
			return StreamState{}, fmt.Errorf("eventlog: stream info %s: no leader answered: %w", stream, ctx.Err())
		case <-time.After(electionRetryWait):
		}
	}
}

// streamAdvisory is the subject of JetStream's advisories about a stream (created,
// updated, deleted, restored, a new leader…); the last token is the stream's name.
const streamAdvisory = "$JS.EVENT.ADVISORY.STREAM.*."

// WatchStreams calls fn with a stream's name whenever JetStream announces a change
// to one of capdir's streams (created, updated, deleted, restored…), until stop is
// called. fn runs on the connection's callback goroutine and must not block.
// Advisories are plain NATS messages: one can be missed (during a reconnect, or
// where the connection may not subscribe to them), so a watcher that must not miss a
// change also checks [Log.State] on its own schedule.
func (l *Log) WatchStreams(fn func(stream string)) (stop func(), err error) {
	var subs []*nats.Subscription
	stop = func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}
	for _, name := range wire.Streams {
		s, err := l.nc.Subscribe(streamAdvisory+name, func(*nats.Msg) { fn(name) })
		if err != nil {
			stop()
			return nil, fmt.Errorf("eventlog: watch %s: %w", name, err)
		}
		subs = append(subs, s)
	}
	if err := l.nc.Flush(); err != nil {
		stop()
		return nil, fmt.Errorf("eventlog: watch streams: %w", err)
	}
	return stop, nil
}
