package eventlog

import (
	"context"
	"sync"
	"time"
)

// followQueue carries a follower's events from its reader (which takes the
// log's messages and decodes them) to the goroutine that hands them over in
// batches. The reader puts each message's events in whole, under one lock;
// the follower takes everything put so far at once. A pack's events cross in
// one hand-over, not one each, and a message's events are never split between
// two takes, so a batch can always end with its last message whole.
type followQueue struct {
	mu      sync.Mutex
	pending []Stored
	closed  bool // the reader has stopped: nothing more is put
	// limit is how many events may be pending before the reader waits (it then
	// puts a whole message, which may take pending past limit).
	limit int
	// ready holds a token once events were put or the reader stopped; room
	// once pending was taken. Each is a hint: whoever receives one looks again.
	ready chan struct{}
	room  chan struct{}
}

// newFollowQueue is a queue for a reader that waits once limit events are
// pending. It and its follower's followTaken each hold a buffer of limit
// events to begin with, which they swap at each take.
func newFollowQueue(limit int) *followQueue {
	limit = max(limit, 1)
	return &followQueue{limit: limit, pending: make([]Stored, 0, limit),
		ready: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// put appends evs, one message's events, once fewer than limit are pending. It
// returns false, having put nothing, when quit closes or ctx ends first.
func (q *followQueue) put(ctx context.Context, quit <-chan struct{}, evs []Stored) bool {
	for {
		q.mu.Lock()
		if len(q.pending) < q.limit {
			q.pending = append(q.pending, evs...)
			q.mu.Unlock()
			notify(q.ready)
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.room:
		case <-quit:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// close says the reader has stopped.
func (q *followQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	notify(q.ready)
}

// ended reports whether the reader has stopped and nothing is pending.
func (q *followQueue) ended() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed && len(q.pending) == 0
}

// take returns every pending event, leaving buf (emptied) to be put into
// next; ended is true when nothing was pending and the reader has stopped.
func (q *followQueue) take(buf []Stored) (evs []Stored, ended bool) {
	q.mu.Lock()
	evs, q.pending = q.pending, buf[:0]
	ended = q.closed && len(evs) == 0
	q.mu.Unlock()
	if len(evs) > 0 {
		notify(q.room)
	}
	return evs, ended
}

// followTaken is what the follower has taken from its queue and not yet put in
// a batch: events[next:].
type followTaken struct {
	events []Stored
	next   int
}

// more appends to batch what has arrived, up to limit events and then to the end
// of the last message. ended is true when the reader has stopped and batch
// holds the last of what it put (nothing more will come).
func (t *followTaken) more(q *followQueue, batch []Stored, limit int) (_ []Stored, ended bool) {
	for len(batch) < limit || batch[len(batch)-1].More() {
		if t.next == len(t.events) {
			// Everything taken went into batches (and was cleared): the buffer
			// goes back to the queue.
			t.events, ended = q.take(t.events)
			t.next = 0
			if len(t.events) == 0 {
				return batch, ended
			}
		}
		// Up to limit events, then on to the end of the last message (which is
		// among the events taken: a message is put whole).
		i := min(t.next+max(limit-len(batch), 1), len(t.events))
		for i < len(t.events) && t.events[i-1].More() {
			i++
		}
		batch = append(batch, t.events[t.next:i]...)
		// The batch holds its copies: the buffer keeps no event's data (nor a
		// pack's buffer) while it waits for the next take.
		clear(t.events[t.next:i])
		t.next = i
	}
	return batch, false
}

// linger adds what arrives to batch until it is full, opts.Linger has passed,
// opts.Hurry fires, the reader stops or ctx ends.
func (t *followTaken) linger(ctx context.Context, q *followQueue, batch []Stored, limit int, opts FollowOptions) []Stored {
	if q.ended() { // its close may have come with the token that woke the follower
		return batch
	}
	timer := time.NewTimer(opts.Linger)
	defer timer.Stop()
	for len(batch) < limit {
		select {
		case <-q.ready:
			var ended bool
			if batch, ended = t.more(q, batch, limit); ended || opts.reached(batch) {
				return batch
			}
		case <-opts.Hurry:
			return batch
		case <-timer.C:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}
