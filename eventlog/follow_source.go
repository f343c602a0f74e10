package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// followSource is a follower's reading of the stream: one ordered consumer and
// its iterator at a time, made again when it stalls.
//
// The client's ordered consumer makes its consumer again by itself after a
// reconnect, a missed heartbeat or a lost consumer. After a server of a cluster
// was killed, it was seen to go silent for good instead: every node's follower
// waited on an iterator that delivered nothing while the stream grew, and every
// read that needed the projection waited with it. So a watchdog looks, every
// followStallCheck, whether the iterator has been waited on for
// followStallAfter while the stream holds a later sequence than the follower
// has read; then it stops that iterator, and the source follows again from the
// next sequence on a consumer of a new name (the old one's are reaped), with a
// warning. A follower that has read everything, or whose handler is slow, is not
// stalled.
type followSource struct {
	l      *Log
	stream string
	opts   []jetstream.PullMessagesOpt

	mu      sync.Mutex
	it      jetstream.MessagesContext
	prefix  string
	stopped chan struct{} // closed when it is stopped (for a stand-in iterator)
	stalled bool          // it was stopped as stalled: follow again

	read    atomic.Uint64 // the sequence of the last message read
	waiting atomic.Int64  // since when Next has been waited on (unix ns); 0 when not
	hang    func(stopped <-chan struct{}) bool
}

// Stall detection's timings (Log.followStall overrides them in tests).
const (
	followStallAfter = 15 * time.Second
	followStallCheck = 5 * time.Second
)

// open makes the consumer and iterator that follow the stream from sequence
// from.
func (s *followSource) open(ctx context.Context, from uint64) error {
	prefix := followPrefix()
	cons, err := s.l.js.OrderedConsumer(ctx, s.stream, orderedConfig(from, prefix))
	if err != nil {
		return err
	}
	it, err := cons.Messages(s.opts...)
	if err != nil {
		s.l.reap(s.stream, prefix, closedChan) // Messages may have made the consumer before it failed
		return err
	}
	s.mu.Lock()
	s.it, s.prefix, s.stopped, s.stalled = it, prefix, make(chan struct{}), false
	s.mu.Unlock()
	return nil
}

// next is the iterator's next message. When the iterator was stopped because it
// stalled, it follows again from the message after the last one read, and
// reads on; errors other than that are returned.
func (s *followSource) next(ctx context.Context, quit <-chan struct{}) (jetstream.Msg, error) {
	for {
		s.mu.Lock()
		it, stopped := s.it, s.stopped
		s.mu.Unlock()
		s.waiting.Store(time.Now().UnixNano())
		var m jetstream.Msg
		var err error
		if s.hang != nil && s.hang(stopped) {
			err = jetstream.ErrMsgIteratorClosed
		} else {
			m, err = it.Next()
		}
		s.waiting.Store(0)
		if err == nil {
			return m, nil
		}
		select {
		case <-quit: // the follower is done
			return nil, err
		default:
		}
		s.mu.Lock()
		again, prefix := s.stalled, s.prefix
		s.mu.Unlock()
		if !again || !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return nil, err
		}
		s.l.reap(s.stream, prefix, closedChan) // its iterator has returned
		if err := s.reopen(ctx, quit); err != nil {
			return nil, err
		}
		select {
		case <-quit: // stopped while following again: stop what was made
			s.stop(closedChan)
			return nil, jetstream.ErrMsgIteratorClosed
		default:
		}
	}
}

// reopen follows again from the message after the last one read, trying until
// it can, quit is closed or ctx ends (ErrMsgIteratorClosed).
func (s *followSource) reopen(ctx context.Context, quit <-chan struct{}) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		octx, cancel := context.WithTimeout(ctx, followReapTimeout)
		err := s.open(octx, s.read.Load()+1)
		cancel()
		if err == nil {
			return nil
		}
		s.l.cfg.Logger.Warn("eventlog: the follower could not follow the stream again; trying again", "stream", s.stream, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-quit:
			t.Stop()
			return jetstream.ErrMsgIteratorClosed
		case <-ctx.Done():
			t.Stop()
			return jetstream.ErrMsgIteratorClosed
		}
	}
}

// watch stops the iterator as stalled when it has been waited on for
// stallAfter while the stream holds a later sequence than was read, checking
// every check, until quit is closed.
func (s *followSource) watch(quit <-chan struct{}, stallAfter, check time.Duration) {
	t := time.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			since := s.waiting.Load()
			if since == 0 || now.Sub(time.Unix(0, since)) < stallAfter {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), followReapTimeout)
			last, err := s.l.LastSeq(ctx, s.stream)
			cancel()
			read := s.read.Load()
			if err != nil || last <= read || s.waiting.Load() != since {
				continue
			}
			s.mu.Lock()
			if s.stalled { // stopped already; the reader is following again
				s.mu.Unlock()
				continue
			}
			s.stalled = true
			it, stopped := s.it, s.stopped
			s.mu.Unlock()
			s.l.cfg.Logger.Warn("eventlog: the follower's consumer delivered nothing while the stream grew; following again from the next sequence",
				"stream", s.stream, "read", read, "stream_last", last, "waited", now.Sub(time.Unix(0, since)).Round(time.Second))
			close(stopped)
			it.Stop()
		}
	}
}

// stop stops the current iterator and hands its consumers to a reaper once
// readerDone is closed.
func (s *followSource) stop(readerDone <-chan struct{}) {
	s.mu.Lock()
	it, prefix := s.it, s.prefix
	if !s.stalled {
		s.stalled = true // for watch: nothing more to stop
		close(s.stopped)
	}
	s.mu.Unlock()
	it.Stop()
	s.l.reap(s.stream, prefix, readerDone)
}

// errFollow wraps a follower's error.
func errFollow(stream string, err error) error {
	return fmt.Errorf("eventlog: follow %s: %w", stream, err)
}
