package projector

import (
	"context"
	"sync"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// seenRequests are the data stream's requests this projector has read and not
// yet committed: with them, whether an invocation id has a request before a
// given sequence is known once the follower has read that far, without waiting
// for the batch that holds them to commit (InvocationBefore).
type seenRequests struct {
	mu sync.Mutex
	// read is the last data-stream sequence the follower has read whole (Seen):
	// every event of its message, a pack's last included. touched is the
	// last it has read any event of: a pack is handed over event by event, and
	// its later events, requests among them, may still be to come.
	read, touched uint64
	// ids holds, by invocation id, the requests read and not yet committed.
	ids map[string]seenID
	// order holds them in stream order, so that a commit forgets what it folded;
	// its first decoded are recorded in ids (decodeLocked).
	order   []seenRequest
	decoded int
	// waits are the callers waiting for the follower to read up to a sequence.
	waits []readWait
}

type readWait struct {
	upTo uint64
	ch   chan struct{}
}

// seenID is an invocation id's requests read and not yet committed: the first
// one's sequence (kept while any is left: it is never later than theirs) and
// how many there are.
type seenID struct {
	first uint64
	n     int
}

// seenRequest is a request read and not yet committed. It is decoded
// (checkRequest) only when a caller asks about what was read (before), which
// is rare: until then it holds a copy of the event, which the follower never
// changes, and afterwards only the invocation id it names ("" for a request
// the fold skips).
type seenRequest struct {
	seq uint64
	id  string
	ev  eventlog.Stored // until decoded
}

func newSeenRequests() *seenRequests {
	return &seenRequests{ids: map[string]seenID{}}
}

// see records s, read by the data stream's follower. A request is recorded
// under the invocation id it names (checkRequest, as the fold reads it), once
// a caller asks (decodeLocked): the fold records it there, or under the id
// scoped to its client, which a caller asks about only after asking about the
// unscoped one. A request the fold skips is not recorded: folding it changes
// nothing.
func (r *seenRequests) see(s *eventlog.Stored) {
	isRequest := s.Type == wire.TypeInvocationRequested && s.Invalid == ""
	r.mu.Lock()
	if isRequest {
		r.order = append(r.order, seenRequest{seq: s.Seq, ev: *s})
	}
	if s.Seq > r.touched {
		r.touched = s.Seq
	}
	read := s.Seq
	if s.More() {
		read-- // the rest of its message is still to come
	}
	if read > r.read {
		r.read = read
	}
	if len(r.waits) > 0 {
		r.wakeLocked()
	}
	r.mu.Unlock()
}

// decodeLocked records the requests read since the last call under the
// invocation ids they name.
func (r *seenRequests) decodeLocked() {
	for i := r.decoded; i < len(r.order); i++ {
		q := &r.order[i]
		if h, err := checkRequest(&q.ev, wire.ParseSubject(q.ev.Subject)); err == nil {
			q.id = h.InvocationID
			e, ok := r.ids[q.id]
			if !ok {
				e.first = q.seq
			}
			e.n++
			r.ids[q.id] = e
		}
		q.ev = eventlog.Stored{}
	}
	r.decoded = len(r.order)
}

// wakeLocked wakes the callers waiting for what the follower has read.
func (r *seenRequests) wakeLocked() {
	kept := r.waits[:0]
	for _, w := range r.waits {
		if w.upTo <= r.read {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	clear(r.waits[len(kept):])
	r.waits = kept
}

// touchedUpTo is the last data-stream sequence the follower has read any
// event of.
func (r *seenRequests) touchedUpTo() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.touched
}

// hasRead reports whether the follower has read the data stream up to upTo,
// each message whole.
func (r *seenRequests) hasRead(upTo uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read >= upTo
}

// waitRead waits until the follower has read the data stream up to upTo, each
// message whole, or ctx is done (false).
func (r *seenRequests) waitRead(ctx context.Context, upTo uint64) bool {
	r.mu.Lock()
	if r.read >= upTo {
		r.mu.Unlock()
		return true
	}
	w := readWait{upTo: upTo, ch: make(chan struct{})}
	r.waits = append(r.waits, w)
	r.mu.Unlock()
	select {
	case <-w.ch:
		return true
	case <-ctx.Done():
		r.mu.Lock()
		for i := range r.waits {
			if r.waits[i].ch == w.ch {
				r.waits = append(r.waits[:i], r.waits[i+1:]...)
				break
			}
		}
		r.mu.Unlock()
		return false
	}
}

// committed forgets the requests up to sequence last: a read of the
// projection sees them now.
func (r *seenRequests) committed(last uint64) {
	r.mu.Lock()
	// Every request up to last goes, not only those at the front: what a
	// follower stopped before committing (a Run that ended) stays in order
	// before what the next one reads again, and the event bytes they hold are
	// the follower's, good only until their batch commits.
	kept, decoded := 0, 0
	for i := range r.order {
		q := &r.order[i]
		if q.seq > last {
			if i < r.decoded {
				decoded++
			}
			r.order[kept] = *q
			kept++
			continue
		}
		if id := q.id; id != "" { // decoded, and named an id
			if e := r.ids[id]; e.n <= 1 {
				delete(r.ids, id)
			} else {
				e.n--
				r.ids[id] = e
			}
		}
	}
	clear(r.order[kept:]) // the events they held
	r.order = r.order[:kept]
	r.decoded = decoded
	r.mu.Unlock()
}

// before reports whether the follower has read the data stream up to seq-1,
// each message whole (a request under id may be a later event of a pack whose
// first events it has read), and holds no request under id before seq that is
// not yet committed.
func (r *seenRequests) before(id string, seq uint64) bool {
	r.mu.Lock()
	r.decodeLocked()
	e, pending := r.ids[id]
	ok := r.read+1 >= seq && !(pending && e.first < seq)
	r.mu.Unlock()
	return ok
}

// Read is the last sequence of the data stream this projector has read an
// event of while following it (OnSeen was told of every event before it, and
// of one or more of its message's), whether or not its batch has committed:
// Applied catches up with it once the batch holding its message whole has. For
// another stream, it is Applied.
func (p *Projector) Read(stream string) uint64 {
	if stream != wire.DataStream {
		return p.Applied(stream)
	}
	return max(p.seenReqs.touchedUpTo(), p.Applied(stream))
}

// InvocationBefore is Invocation(id) as it stands once the projection has
// folded the data stream up to seq-1, answered without waiting for that fold
// to commit when it can be: it waits, at most the projection wait
// (Settings.Wait) and without cutting a lingering batch short, for the
// follower to read up to seq-1. known is false when it has not read that far
// by then, or has read a request under id before seq whose batch has not
// committed: the caller then waits (WaitFor) and reads Invocation. What the
// projection holds past seq-1 may be in the answer, as it is in Invocation's
// after WaitFor.
func (p *Projector) InvocationBefore(ctx context.Context, id string, seq uint64) (inv Invocation, known bool, err error) {
	if p.failure() != nil {
		return Invocation{}, false, nil
	}
	if seq > 1 && p.Applied(wire.DataStream) < seq-1 {
		if !p.seenReqs.hasRead(seq - 1) {
			// Not yet read: waited for under a deadline, which costs a timer,
			// only then.
			wctx, cancel := p.WaitContext(ctx)
			read := p.seenReqs.waitRead(wctx, seq-1)
			cancel()
			if !read {
				return Invocation{}, false, nil
			}
		}
		if !p.seenReqs.before(id, seq) || p.failure() != nil {
			return Invocation{}, false, nil
		}
	}
	inv, err = p.Invocation(id)
	return inv, true, err
}

// InvocationNow is Invocation(id) as it stands once the projection has folded
// what the data stream holds now (a round trip to the log, as Settle), answered
// without waiting for a commit when it can be (InvocationBefore): known is false
// when the follower has not read that far within the projection wait, or has
// read a request under id not yet committed; the caller then settles (Settle)
// and reads again.
func (p *Projector) InvocationNow(ctx context.Context, id string) (inv Invocation, known bool, err error) {
	st, err := p.verify(ctx, wire.DataStream)
	if err != nil {
		return Invocation{}, false, err
	}
	return p.InvocationBefore(ctx, id, st.LastSeq+1)
}
