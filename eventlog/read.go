package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// LastSeq is the stream's last sequence (0 when empty).
func (l *Log) LastSeq(ctx context.Context, stream string) (uint64, error) {
	st, err := l.State(ctx, stream)
	if err != nil {
		return 0, err
	}
	return st.LastSeq, nil
}

// Handler receives events in stream order. Returning an error stops the read.
type Handler func(Stored) error

// Read delivers the stream's events in order from sequence from (1 = the beginning)
// up to the last sequence at the time of the call, then returns. It hands h one
// event at a time, read from the log readBatch at a time.
func (l *Log) Read(ctx context.Context, stream string, from uint64, h Handler) error {
	last, err := l.LastSeq(ctx, stream)
	if err != nil {
		return err
	}
	return l.ReadRange(ctx, stream, from, last, readBatch, eachStored(h))
}

// readBatch is how many events Read takes from its reader at a time: one
// hand-over a batch rather than one an event.
const readBatch = 256

// minPull is the fewest messages a follower's pulls ask the log for. The
// client's iterator asks for its next pull when a message is taken and fewer
// than half of the last pull's are still to come, unless it is still sending the
// last pull; when the last message of a pull is taken in that moment, it asks
// for nothing more until its missed-heartbeat check, two seconds later. With
// pulls of two messages (a follower handing over one event at a time) that
// moment came often under the race detector: a read of 1,500 messages took 6 to
// 22 seconds instead of 0.1, where pulls of 8 or 64 never waited.
const minPull = 64

// eachStored hands h a batch's events one by one.
func eachStored(h Handler) BatchHandler {
	return func(b []Stored) error {
		for i := range b {
			if err := h(b[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// ReadRange delivers the stream's events in order, in batches of up to max, from
// sequence from (1 = the beginning) until it has delivered sequence to, then returns.
// The last batch may run past to. A read that stops before it has delivered to
// (ctx ended, the log's reader stopped) returns an error saying where; one
// wrapping ctx's cause when ctx ended.
func (l *Log) ReadRange(ctx context.Context, stream string, from, to uint64, max int, h BatchHandler) error {
	return l.ReadRangeWith(ctx, stream, from, to, FollowOptions{Max: max}, h)
}

// ReadRangeWith is ReadRange with the batches shaped by opts, as FollowBatches
// shapes them: a reader whose cost is mostly per batch (a rebuild's commits) sets
// a Linger, so that each batch fills up to opts.Max while the log delivers
// faster than the handler applies. The batch that reaches to is handed over
// without lingering (opts.Until is to).
func (l *Log) ReadRangeWith(ctx context.Context, stream string, from, to uint64, opts FollowOptions, h BatchHandler) error {
	if from == 0 {
		from = 1
	}
	if to < from {
		return nil
	}
	opts.Until = to
	last := from - 1 // the last sequence delivered
	err := l.FollowBatches(ctx, stream, from, opts, func(b []Stored) error {
		if err := h(b); err != nil {
			return err
		}
		last = b[len(b)-1].Seq
		if last >= to {
			return errStopFollow
		}
		return nil
	})
	if err == nil && last < to {
		// FollowBatches returns nil when ctx ends, and when its reader stops.
		if cause := context.Cause(ctx); cause != nil {
			return fmt.Errorf("eventlog: read of %s stopped at sequence %d of %d..%d: %w", stream, last, from, to, cause)
		}
		return fmt.Errorf("eventlog: read of %s stopped at sequence %d of %d..%d", stream, last, from, to)
	}
	return err
}

var errStopFollow = errors.New("stop")

// ReadSubject delivers, in stream order, the events on subject up to the last one
// it held at the time of the call, then returns. It asks the log for each event
// in turn (the next one on subject), without a consumer: the cost follows the
// subject's length, not the stream's.
func (l *Log) ReadSubject(ctx context.Context, stream, subject string, h Handler) error {
	s, ok := l.streams[stream]
	if !ok {
		return fmt.Errorf("eventlog: unknown stream %q", stream)
	}
	last, err := l.LastSubjectSeq(ctx, stream, subject)
	if err != nil {
		return err
	}
	for seq := uint64(1); seq <= last; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("eventlog: read %s: %w", subject, err)
		}
		if err := h(newStored(stream, m.Subject, m.Sequence, m.Data)); err != nil {
			return err
		}
		seq = m.Sequence + 1
	}
	return nil
}

// PullExpiry and PullHeartbeat shape every pull capdir makes from a consumer (the
// projector's ordered consumers, the dispatcher's workers): a pull lasts
// PullExpiry, and the server holding it sends a heartbeat every PullHeartbeat
// while it has nothing to deliver. A pull held by a server that went away (a
// cluster's consumer leader shut down or cut off) is noticed after two missed
// heartbeats and made again, on the new leader; with nats.go's defaults (30 s,
// 15 s) every node stopped folding and running for about 30 s after such an
// outage.
const (
	PullExpiry    = 5 * time.Second
	PullHeartbeat = time.Second
)

// Follow delivers the stream's events in order from sequence from, and then every
// new event as it is appended, until ctx is done or h returns an error. It returns
// nil when stopped by ctx, else h's error. Delivery is one event at a time in
// order; batching is the handler's business (see [Log.FollowBatches]).
func (l *Log) Follow(ctx context.Context, stream string, from uint64, h Handler) error {
	return l.FollowBatches(ctx, stream, from, FollowOptions{Max: 1}, eachStored(h))
}

// BatchHandler receives events in stream order, in batches of at least one. A
// batch holds every event of its last message: the events of a pack (Stored.Part)
// are never split between two batches, so a batch may hold a few more than
// FollowOptions.Max.
type BatchHandler func([]Stored) error

// FollowOptions shape the batches FollowBatches hands over.
type FollowOptions struct {
	// Max bounds a batch (default 1).
	Max int
	// Linger is how long a batch that is not full may wait for more events before
	// it is handed over; 0 hands over whatever has arrived at once. A handler whose
	// cost is mostly per batch (a transaction commit) does less work per event under
	// load when it lingers.
	Linger time.Duration
	// LingerFrom is how many events a batch, or the batch before it, must hold for
	// it to linger (0 and 1: any batch). With 2, lone events, the common case under
	// light load, are handed over at once; once events come faster than the handler
	// takes them, batches linger.
	LingerFrom int
	// Until, when set, cuts a linger short once the batch holds sequence Until or
	// a later one: a reader that stops there (ReadRangeWith) has nothing more to
	// wait for.
	Until uint64
	// Hurry, when set, cuts a linger short: a value received on it hands the batch
	// over at once (a reader waiting for the handler's result sends one).
	Hurry <-chan struct{}
	// Seen, when set, is called with every event as it arrives, in stream order,
	// before the batch holding it is handed over. It must not block for long, nor
	// keep the pointer past its return (it may keep a copy of the event).
	Seen func(*Stored)
	// Transient says the handler, and Seen, keep no event's Data once the
	// handler has returned nil for the batch holding it (they copy what they
	// keep): the events of a compressed pack are then decompressed into a
	// buffer used again for a later pack, instead of one of their own each.
	Transient bool
	// HandsBack, with Transient, says the handler keeps the batch's events
	// past its return (a copy of the slice) and hands them back itself with
	// Release once nothing reads their Data any more: the follower then puts
	// back no buffer. Batches are handed back in the order they came: a pack's
	// buffer goes back with the batch holding its last event, and the pack's
	// first events may be in the batches before it.
	HandsBack bool
}

// FollowBatches is Follow delivering events in batches as opts describe: whatever
// has arrived when the handler is ready, plus what arrives during the linger.
func (l *Log) FollowBatches(ctx context.Context, stream string, from uint64, opts FollowOptions, h BatchHandler) error {
	if from == 0 {
		from = 1
	}
	max := opts.Max
	if max < 1 {
		max = 1
	}
	src := &followSource{l: l, stream: stream, hang: l.followHang,
		opts: []jetstream.PullMessagesOpt{jetstream.PullMaxMessages(pullSize(max)), jetstream.PullExpiry(PullExpiry), jetstream.PullHeartbeat(PullHeartbeat)}}
	if err := src.open(ctx, from); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return errFollow(stream, err)
	}
	src.read.Store(from - 1)
	// Messages are decoded on the reading goroutine, so that decoding the next
	// events overlaps with the handler applying the last batch.
	//
	// The follower does not wait for that goroutine to end: the client's ordered
	// iterator can miss a Stop that lands while it recreates its consumer (after
	// the stream was deleted or its server restarted) and go on waiting on the new
	// consumer, so a follower that waited for its reader would hang with it, and
	// so would whoever waits for the follower. Every way out of the follower
	// hands the reader to a reaper (see Log.reap), which deletes the follower's
	// consumers until the reader has returned; until then the reader hands
	// nothing over and reports nothing.
	q := newFollowQueue(max)
	errc := make(chan error, 1)
	quit := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer q.close()
		// What Seen is handed: one for the follower, not one event's copy on the
		// heap each.
		seen := new(Stored)
		packs := packReader{transient: opts.Transient}
		hand := func(evs []Stored) bool {
			select {
			case <-quit: // the follower has returned: Seen is not called again
				return false
			default:
			}
			if opts.Seen != nil {
				for i := range evs {
					*seen = evs[i]
					opts.Seen(seen)
					*seen = Stored{}
				}
			}
			return q.put(ctx, quit, evs)
		}
		for {
			m, err := src.next(ctx, quit)
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					select {
					case errc <- errFollow(stream, err):
					default:
					}
				}
				return
			}
			one, pack, err := packs.toStored(stream, m)
			if err != nil {
				select {
				case errc <- err:
				default:
				}
				return
			}
			if pack != nil {
				src.read.Store(pack[0].Seq)
			} else {
				src.read.Store(one.Seq)
				pack = []Stored{one}
			}
			if !hand(pack) {
				return
			}
		}
	}()
	stallAfter, stallCheck := followStallAfter, followStallCheck
	if l.followStall > 0 {
		stallAfter, stallCheck = l.followStall, l.followStall/3
	}
	go src.watch(quit, stallAfter, stallCheck)
	defer func() {
		close(quit)
		src.stop(readerDone)
	}()
	taken := followTaken{events: make([]Stored, 0, max)}
	batch := make([]Stored, 0, max)
	prev := 0 // the size of the last batch handed over
	for {
		if ctx.Err() != nil {
			return nil
		}
		batch = batch[:0]
		for {
			var ended bool
			if batch, ended = taken.more(q, batch, max); len(batch) > 0 {
				break
			}
			if ended {
				// The reader's error, if it had one, comes after every event it
				// put: it sends it before it closes the queue.
				select {
				case err := <-errc:
					return err
				default:
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-q.ready:
			}
		}
		if opts.Linger > 0 && (len(batch) >= opts.LingerFrom || prev >= opts.LingerFrom) && len(batch) < max && !opts.reached(batch) {
			batch = taken.linger(ctx, q, batch, max, opts)
		}
		prev = len(batch)
		if err := h(batch); err != nil {
			if errors.Is(err, errStopFollow) {
				return nil
			}
			return err
		}
		if opts.Transient && !opts.HandsBack {
			release(batch)
		}
	}
}

// reached reports whether batch holds opts.Until (when set) or a later sequence.
func (opts *FollowOptions) reached(batch []Stored) bool {
	return opts.Until > 0 && batch[len(batch)-1].Seq >= opts.Until
}

// toStored is the event of m, or, for a pack, its events (pack not nil, good
// until the next call).
func (r *packReader) toStored(stream string, m jetstream.Msg) (one Stored, pack []Stored, err error) {
	meta, err := m.Metadata()
	if err != nil {
		return Stored{}, nil, fmt.Errorf("eventlog: message metadata: %w", err)
	}
	if wire.IsPackSubject(m.Subject()) {
		return Stored{}, r.events(stream, m.Subject(), meta.Sequence.Stream, m.Data()), nil
	}
	return newStored(stream, m.Subject(), meta.Sequence.Stream, m.Data()), nil, nil
}

// newStored decodes data, the body of the message at seq on subject, whose bytes
// nothing changes afterwards (the client's copy of a message, not reused).
func newStored(stream, subject string, seq uint64, data []byte) Stored {
	st := Stored{Stream: stream, Subject: subject, Seq: seq}
	ev, err := wire.DecodeShared(data)
	if err != nil {
		// A client on the bus can publish anything to a request subject: keep the
		// position and let the consumer skip it, so one bad message cannot stall the log.
		st.Invalid = err.Error()
		return st
	}
	st.Event = ev
	return st
}

// LastSubjectSeq is the sequence of the last message on subject in stream, 0 when
// the subject has none. It asks the log itself, not a projection: use it to learn
// whether a projection is behind for one key.
func (l *Log) LastSubjectSeq(ctx context.Context, stream, subject string) (uint64, error) {
	s, ok := l.streams[stream]
	if !ok {
		return 0, fmt.Errorf("eventlog: unknown stream %q", stream)
	}
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("eventlog: last message of %s: %w", subject, err)
	}
	return m.Sequence, nil
}

// pullSize is how many messages a follower handing over batches of up to batch
// events asks the log for at a time.
func pullSize(batch int) int {
	return max(2*batch, minPull)
}
