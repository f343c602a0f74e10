package projector

import (
	"context"
	"fmt"

	"github.com/capdir/capdir/eventlog"
)

// foldSpan is the part of a stream a catch-up folds: from..to.
type foldSpan struct {
	stream   string
	from, to uint64
}

// foldRanges folds each span's events in turn, as a catch-up does, in three
// stages on three goroutines, each batch through them in order: the log's reader
// hands the batches over (its own goroutine decodes the envelopes meanwhile), the
// preparer does what each event's fold needs of the event alone (prepare.go), and
// the applier folds and commits them, one transaction a batch, as apply does. So
// on two cores the next batch is read and prepared while one commits. At most
// one batch waits between two stages.
//
// The spans are read one after the other through the same stages: the next
// span's first batches are read and prepared while the last ones of the span
// before commit, and the batches commit in the order of the spans, as folding
// each span on its own would commit them.
//
// A batch's buffers (its events, their prepared forms and the values prepared
// for bbolt) go back to a free list once it has committed, and the next batches
// take them from there: a catch-up of many batches allocates them a few times,
// not once a batch.
func (p *Projector) foldRanges(ctx context.Context, spans []foldSpan, opts eventlog.FollowOptions, progress Progress) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepc := make(chan *foldJob, 1)
	applyc := make(chan *foldJob, 1)
	// Up to one batch in each stage, one waiting between each two, and one being
	// handed back.
	free := make(chan *foldJob, 6)
	applied := make(chan error, 1)
	go func() {
		defer close(applyc)
		for j := range prepc {
			prepare(j.batch, j.pre, &j.values)
			select {
			case applyc <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		var err error
		for j := range applyc {
			if err != nil {
				continue // the first error stands; the rest is dropped
			}
			if err = p.apply(j.span.stream, j.batch, j.pre, &j.values); err != nil {
				cancel()
				continue
			}
			if p.cfg.rebuild {
				p.behind.kick(p.db.Sync)
			}
			if progress != nil {
				progress(j.span.stream, j.batch[len(j.batch)-1].Seq, j.span.to)
			}
			j.release()
			select {
			case free <- j:
			default:
			}
		}
		applied <- err
	}()
	var rerr error
	for _, sp := range spans {
		rerr = p.cfg.Log.ReadRangeWith(ctx, sp.stream, sp.from, sp.to, opts, func(b []eventlog.Stored) error {
			// The reader reuses b for its next batch.
			var j *foldJob
			select {
			case j = <-free:
			default:
				j = new(foldJob)
			}
			j.take(sp, b)
			select {
			case prepc <- j:
				return nil
			case <-ctx.Done(): // the batch is dropped: the read stops short of its end
				return ctx.Err()
			}
		})
		if rerr != nil || ctx.Err() != nil {
			break
		}
	}
	close(prepc)
	if err := <-applied; err != nil {
		return err
	}
	return rerr
}

// foldJob is one batch of a catch-up on its way through foldRange's stages.
type foldJob struct {
	span  foldSpan // the span the batch is of
	batch []eventlog.Stored
	pre   []prepared
	// values holds what prepare and apply build for bbolt's puts, which bbolt
	// keeps until the batch's transaction commits.
	values arena
}

// take makes j span sp's batch b, copied (the reader reuses b).
func (j *foldJob) take(sp foldSpan, b []eventlog.Stored) {
	j.span = sp
	j.batch = append(j.batch[:0], b...)
	if cap(j.pre) < len(b) {
		j.pre = make([]prepared, len(b))
	} else {
		j.pre = j.pre[:len(b)]
	}
}

// release drops what j's committed batch refers to (the events' data, their
// prepared forms), so that only the buffers stay, and empties its arena. The
// buffers the batch's packs were decompressed into go back to the log's reader
// (FollowOptions.HandsBack): the batches commit in their order, so every batch
// before j's has been released too.
func (j *foldJob) release() {
	eventlog.Release(j.batch)
	clear(j.batch)
	clear(j.pre)
	j.batch, j.pre = j.batch[:0], j.pre[:0]
	j.values.reset()
}

// arena hands out byte slices from a few large chunks, all of them given back
// at once by reset. A nil *arena hands out fresh allocations.
type arena struct {
	chunks [][]byte
	cur    int // the chunk being handed out from; those before it are full
}

// foldArenaChunk is the size of one arena chunk; a slice of more than a quarter of
// it is allocated on its own.
const foldArenaChunk = 256 << 10

// take returns an empty slice with room for n bytes, which nothing else is
// handed until reset.
func (a *arena) take(n int) []byte {
	if a == nil || n > foldArenaChunk/4 {
		return make([]byte, 0, n)
	}
	for ; a.cur < len(a.chunks); a.cur++ {
		c := a.chunks[a.cur]
		if off := len(c); cap(c)-off >= n {
			a.chunks[a.cur] = c[:off+n]
			return c[off : off : off+n]
		}
	}
	a.chunks = append(a.chunks, make([]byte, n, foldArenaChunk))
	return a.chunks[a.cur][0:0:n]
}

// reset gives every slice handed out back to the arena.
func (a *arena) reset() {
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
}

// resetKeeping is reset, keeping at most n chunks: an arena that lives as
// long as the projector does not hold on to what one large batch needed.
func (a *arena) resetKeeping(n int) {
	a.reset()
	if len(a.chunks) > n {
		clear(a.chunks[n:])
		a.chunks = a.chunks[:n]
	}
}

// liveArenaChunks is how many chunks a following projector's arena keeps
// between batches: a batch of a few hundred receipts' values.
const liveArenaChunks = 2

// syncBehind writes a rebuild's file out while the rebuild goes on: a rebuild
// commits without fsync (Rebuild), and the fsync its Close makes would otherwise
// write the whole file at the end, with nothing else to do meanwhile. After a
// commit, kick starts an fsync unless one is still running; so Close's fsync
// has only the last commits left to write.
type syncBehind struct {
	done chan struct{} // closed when the fsync running ends; nil when none runs
	err  error         // the first fsync's error, set before done is closed
}

// kick starts sync on a goroutine of its own, unless one it started still runs
// or one failed.
func (s *syncBehind) kick(sync func() error) {
	if s.done != nil {
		select {
		case <-s.done:
		default:
			return // one still runs
		}
	}
	if s.err != nil {
		s.done = nil
		return
	}
	done := make(chan struct{})
	s.done = done
	go func() {
		defer close(done)
		if err := sync(); err != nil {
			s.err = fmt.Errorf("projector: write the rebuilt file out: %w", err)
		}
	}()
}

// wait waits for the fsync running, if any, and returns the first fsync's
// error: an error fsync reports is reported once, so it is not left for Close's.
func (s *syncBehind) wait() error {
	if s.done != nil {
		<-s.done
		s.done = nil
	}
	return s.err
}
