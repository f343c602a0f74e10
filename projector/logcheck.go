package projector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// A projection is built from one log. Besides its checkpoint per stream it records
// which stream it folded (the stream's creation time), and before folding, while
// following, and whenever a reader settles, it checks that the log still holds what
// it has folded: a stream that ends before the checkpoint, is gone, or was created
// after the one the projection folded means the log was lost or replaced under the
// projection. Folding on would skip events silently (new events get sequences the
// projection believes it has applied), so the projector stops with a
// *LogBehindError instead. Retention removing old events of a stream (FirstSeq
// rising) is not a mismatch: the stream and its last sequence are unchanged.

// DefaultLogCheck is the default Config.LogCheck.
const DefaultLogCheck = 5 * time.Second

// verify checks stream in the log against the projection and returns the log's
// state of it. The first time it sees a stream the projection has folded nothing of
// (or a projection written before streams were recorded), it records the stream.
func (p *Projector) verify(ctx context.Context, stream string) (eventlog.StreamState, error) {
	if err := p.failure(); err != nil {
		return eventlog.StreamState{}, err
	}
	ckpt := p.Applied(stream) // read before the log: all of it was in the log by then
	st, err := p.cfg.Log.Holds(ctx, stream, ckpt)
	folded := p.foldedStream(stream)
	switch {
	case errors.Is(err, eventlog.ErrStreamNotFound) && ckpt > 0:
		return st, p.fail(&LogBehindError{Stream: stream, Checkpoint: ckpt, Gone: true})
	case err != nil:
		return st, err
	case ckpt > st.LastSeq,
		ckpt > 0 && !folded.IsZero() && !st.Created.IsZero() && !folded.Equal(st.Created):
		return st, p.fail(&LogBehindError{Stream: stream, Checkpoint: ckpt, LastSeq: st.LastSeq, Folded: folded, Created: st.Created})
	case st.Created.IsZero(), folded.Equal(st.Created):
		return st, nil
	case folded.IsZero() || ckpt == 0:
		return st, p.recordStream(stream, ckpt, st.Created)
	}
	return st, nil
}

// verifyAll verifies every stream; a mismatch comes first.
func (p *Projector) verifyAll(ctx context.Context) error {
	var errs []error
	for _, s := range wire.Streams {
		if _, err := p.verify(ctx, s); err != nil {
			if errors.Is(err, ErrLogBehind) {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// recordStream records that the projection folds the stream created at created,
// unless the checkpoint has moved from ckpt meanwhile (the next check decides then).
func (p *Projector) recordStream(stream string, ckpt uint64, created time.Time) error {
	moved := false
	err := p.db.Update(func(tx *bolt.Tx) error {
		v, err := get(tx, bucketMeta, checkpointKey(stream))
		if err != nil {
			return err
		}
		if readU64(v) != ckpt {
			moved = true
			return nil
		}
		return put(tx, bucketStreams, []byte(stream), []byte(created.UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		if derr := p.damaged(err); derr != err {
			return derr
		}
		return fmt.Errorf("projector: record stream %s: %w", stream, err)
	}
	if !moved {
		p.streamsMu.Lock()
		p.folded[stream] = created
		p.streamsMu.Unlock()
	}
	return nil
}

// foldedStream is the creation time of the stream the projection folded (zero when
// none is recorded).
func (p *Projector) foldedStream(stream string) time.Time {
	p.streamsMu.Lock()
	defer p.streamsMu.Unlock()
	return p.folded[stream]
}

// loadFolded reads the recorded streams.
func loadFolded(tx *bolt.Tx) (map[string]time.Time, error) {
	m := map[string]time.Time{}
	err := each(tx, bucketStreams, func(k, v []byte) error {
		t, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return fmt.Errorf("stream %s: %w", k, err)
		}
		m[string(k)] = t
		return nil
	})
	return m, err
}

// fail records the first failure (a *LogBehindError or a *DamagedError): from
// then on WaitFor, Settle and apply return it, and Run stops.
func (p *Projector) fail(err error) error {
	p.failOnce.Do(func() {
		p.failErr = err
		close(p.failed)
	})
	return p.failErr
}

// failure is the recorded mismatch, nil while there is none.
func (p *Projector) failure() error {
	select {
	case <-p.failed:
		return p.failErr
	default:
		return nil
	}
}

// watchStreams subscribes to the log's stream advisories; kick receives a value
// (without blocking the connection) whenever one arrives. stop is never nil.
func (p *Projector) watchStreams() (kick <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	stop, err := p.cfg.Log.WatchStreams(func(string) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		p.cfg.Logger.Warn("projector: no stream advisories; the log is checked on the interval only", "every", p.cfg.LogCheck, "err", err)
		return ch, func() {}
	}
	return ch, stop
}

// guard checks the log on every advisory and every Config.LogCheck until ctx ends,
// and returns the mismatch that must stop Run.
func (p *Projector) guard(ctx context.Context, kick <-chan struct{}) error {
	t := time.NewTicker(p.cfg.LogCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-kick:
		case <-p.failed:
			return p.failure() // a read found a damaged value
		}
		err := p.verifyAll(ctx)
		switch {
		case errors.Is(err, ErrLogBehind):
			return err
		case err != nil && ctx.Err() == nil:
			p.cfg.Logger.Warn("projector: could not check the log", "err", err)
		}
	}
}
