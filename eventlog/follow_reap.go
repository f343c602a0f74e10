package eventlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// followReapTimeout bounds one round of a reaper's requests (listing the
// stream's consumers, deleting the follower's).
const followReapTimeout = 5 * time.Second

// followPrefix names a follower's consumers: the client's ordered consumer calls
// its first one <prefix>_1 and each one it recreates (after a reconnect, a lost
// consumer, a missed heartbeat) <prefix>_<n+1>, so the prefix finds them all.
func followPrefix() string {
	var b [8]byte
	rand.Read(b[:])
	return "capdir_follow_" + hex.EncodeToString(b[:])
}

// reap deletes, from the server, every consumer a follower made under prefix,
// once its reader has been stopped: the server would keep one until it had been
// idle for the ordered consumer's inactive threshold (five minutes), and the
// client's iterator can miss a Stop that lands while it recreates its consumer,
// so that its reader goes on pulling from the new one until the connection
// closes. Deleting that consumer ends the pull, and the iterator, stopped, then
// makes no other. The reaper deletes again every PullHeartbeat until the reader
// has returned (a consumer made by a recreation in flight at the Stop comes
// after the first round), once more after it, and gives up when the log
// closes. It runs on its own goroutine, so a follower returns without waiting
// for the server; Log.Close waits for it.
func (l *Log) reap(stream, prefix string, readerDone <-chan struct{}) {
	l.reapMu.Lock()
	defer l.reapMu.Unlock()
	select {
	case <-l.closing: // the consumers go with the connection (or expire on a cluster)
		return
	default:
	}
	l.reapers.Add(1)
	go func() {
		defer l.reapers.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-l.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		t := time.NewTicker(PullHeartbeat)
		defer t.Stop()
		for {
			l.deleteConsumers(ctx, stream, prefix)
			select {
			case <-readerDone:
				l.deleteConsumers(ctx, stream, prefix)
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// deleteConsumers deletes stream's consumers named <prefix>_…; errors are left
// for the next round (or, past the last, for the server's inactive threshold).
func (l *Log) deleteConsumers(ctx context.Context, stream, prefix string) {
	ctx, cancel := context.WithTimeout(ctx, followReapTimeout)
	defer cancel()
	s, err := l.js.Stream(ctx, stream)
	if err != nil {
		return
	}
	names := s.ConsumerNames(ctx)
	var ours []string
	for name := range names.Name() {
		if strings.HasPrefix(name, prefix+"_") {
			ours = append(ours, name)
		}
	}
	for _, name := range ours {
		if err := s.DeleteConsumer(ctx, name); err != nil && ctx.Err() != nil {
			return
		}
	}
}

// orderedConfig is the ordered consumer of a follower from sequence from, its
// consumers named under prefix.
func orderedConfig(from uint64, prefix string) jetstream.OrderedConsumerConfig {
	return jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from, NamePrefix: prefix}
}

// closedChan is a channel closed from the start: a reader that never ran.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
