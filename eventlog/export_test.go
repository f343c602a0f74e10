package eventlog

import (
	"sync/atomic"
	"time"
)

// Unanswered is an append whose acknowledgement never comes, for a test that
// stands in for the stream.
func Unanswered() *Pending { return &Pending{} }

// PendingAppends is how many of l's async appends await their acknowledgement.
func (l *Log) PendingAppends() int { return l.pl.pending() }

// GroupCommits is how many batches l's group commit sent, and how many of them
// the stream refused whole (their appends then sent one at a time).
func (l *Log) GroupCommits() (batches, refused uint64) {
	return l.pl.group.batches.Load(), l.pl.group.refused.Load()
}

// GroupRefusal is the reason the stream gave for the last batch it refused
// whole, or "" if none was.
func (l *Log) GroupRefusal() string {
	if why := l.pl.group.why.Load(); why != nil {
		return *why
	}
	return ""
}

// HoldGroup makes l's group commit wait, as for a leader in flight that is
// not answered, until release: the appends made meanwhile go out as one batch.
func (l *Log) HoldGroup() (release func()) {
	pl := l.pl
	hold := &Pending{}
	pl.mu.Lock()
	if pl.group.leader == nil {
		pl.group.leader = hold
	}
	pl.mu.Unlock()
	return func() {
		pl.mu.Lock()
		if pl.group.leader == hold {
			pl.handoffLocked()
		}
		pl.mu.Unlock()
	}
}

// HoldPacks makes l's packer of packSubject wait, as for a leader in flight
// that is not answered, until release: the Packed appends made meanwhile go out
// as one pack.
func (l *Log) HoldPacks(packSubject string) (release func()) {
	pl := l.pl
	k := pl.packs.of(packSubject)
	hold := &Pending{}
	pl.mu.Lock()
	if k.leader == nil {
		k.leader, hold.leads = hold, k
	}
	pl.mu.Unlock()
	return func() {
		pl.mu.Lock()
		if k.leader == hold {
			pl.handoffPackLocked(k)
		}
		pl.mu.Unlock()
	}
}

// DropPackAnswers makes l lose the next n answers to its packs, as if they
// never came.
func (l *Log) DropPackAnswers(n int) {
	var left atomic.Int64
	left.Store(int64(n))
	f := func() bool { return left.Add(-1) >= 0 }
	l.pl.hooks.dropPackAck.Store(&f)
}

// OnPackMade gives f the data of each pack l makes, as it is made and before it
// is compressed; f must not keep it (the buffer is made again into the next pack).
func (l *Log) OnPackMade(f func(data []byte)) { l.pl.hooks.packMade.Store(&f) }

// StallFollowers makes l's followers stop an iterator as stalled once it has
// been waited on for after while the stream holds more, and makes the first
// iterator of each follower go silent after it has delivered n messages, as a
// client's ordered consumer was seen to after a cluster's server was killed.
func (l *Log) StallFollowers(after time.Duration, n int) {
	l.followStall = after
	var delivered atomic.Int64
	var hung atomic.Bool
	l.followHang = func(stopped <-chan struct{}) bool {
		if delivered.Add(1) <= int64(n) || !hung.CompareAndSwap(false, true) {
			return false
		}
		<-stopped
		return true
	}
}

// WaitReapers waits until every follower that has returned has had its
// consumers deleted (see reap).
func (l *Log) WaitReapers() { l.reapers.Wait() }

// AlterBatchAcks makes l read f(the server's acknowledgement) as each batch's
// acknowledgement: the server cannot be made to send one that does not match.
func (l *Log) AlterBatchAcks(f func(ack []byte) []byte) { l.pl.hooks.batchAck.Store(&f) }

// BeforeSendingAgain makes l run f before it sends again alone the appends of a
// batch out of flight (refused whole, or its acknowledgement unmatched).
func (l *Log) BeforeSendingAgain(f func()) { l.pl.hooks.settling.Store(&f) }

// Idle reports whether l's pipeline holds no append in flight or settling, as
// Close waits for.
func (l *Log) Idle() bool {
	select {
	case <-l.pl.complete():
		return true
	default:
		return false
	}
}
