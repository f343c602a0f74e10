package projector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Projector folds the log into bbolt and answers read-side queries. Queries are safe
// for concurrent use with Run. Close is idempotent.
type Projector struct {
	cfg   Config
	db    *bolt.DB
	index *orderIndex
	rows  *rowCache
	// revoked holds the token revocations folded so far (revoked.go).
	revoked *revokedSet
	// upstreams holds the upstream registrations folded so far (upstreams.go).
	upstreams *upstreamSet
	// seenReqs holds the data stream's requests read and not yet committed
	// (seen_requests.go).
	seenReqs *seenRequests
	// byKeyLater holds a rebuild's by-key entries back (bykey_later.go); nil
	// when the projector is not a rebuild's.
	byKeyLater *byKeyLater
	// behind writes a rebuild's file out while it folds; only a catch-up's
	// committing goroutine, and the catch-up once that has ended, use it.
	behind syncBehind

	applied map[string]*atomic.Uint64 // per stream, what has committed
	hurry   map[string]chan struct{}  // per stream, cuts a linger short (WaitFor)
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every commit

	// hooksMu guards the hook lists; apply holds it shared while it updates the
	// order index and calls them, so a hook registered at any time sees every
	// change exactly once.
	hooksMu          sync.RWMutex
	dirWatchers      []func(key string, deleted bool)
	rowWatchers      []func(key string, row *contract.Row) // watch_rows.go
	upstreamWatchers []func(name string)                   // upstreams.go
	appliedSubs      []func(stream string, batch []eventlog.Stored)
	seenSubs         []func(stream string, s *eventlog.Stored)

	// folded is, per stream, the creation time of the stream the projection was
	// built from (logcheck.go); failed is closed once the log no longer matches.
	streamsMu sync.Mutex
	folded    map[string]time.Time
	failOnce  sync.Once
	failed    chan struct{}
	failErr   error

	closeOnce sync.Once
	closed    chan struct{}

	// lastRewind is the last Snapshot DirectoryAt folded to a sequence: asked
	// again it is answered at once, and a later sequence folds on from it (at.go).
	rewindMu   sync.Mutex
	lastRewind *Snapshot
}

// Open opens (or creates) the projection file and loads its checkpoints and order
// index. It does not start folding: call Run.
func Open(cfg Config) (*Projector, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dirty := dirtyMarker(cfg.Path)
	_, wasDirty := os.Stat(dirty)
	// A damaged file is never read (damage.go): it is set aside and the projection
	// starts again from the log, or refused when the log cannot rebuild all of it.
	if err := vet(cfg, wasDirty == nil); err != nil {
		return nil, err
	}
	db, err := openFolded(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(dirty, nil, 0o600); err != nil {
		db.Close()
		return nil, fmt.Errorf("projector: %w", err)
	}
	p := &Projector{
		cfg:       cfg,
		db:        db,
		index:     newOrderIndex(),
		rows:      newRowCache(),
		revoked:   newRevokedSet(cfg.Clock),
		upstreams: newUpstreamSet(),
		seenReqs:  newSeenRequests(),
		applied:   map[string]*atomic.Uint64{},
		hurry:     map[string]chan struct{}{},
		changed:   make(chan struct{}),
		failed:    make(chan struct{}),
		closed:    make(chan struct{}),
	}
	for _, s := range wire.Streams {
		p.applied[s] = new(atomic.Uint64)
		p.hurry[s] = make(chan struct{}, 1)
	}
	if cfg.rebuild {
		p.byKeyLater = newByKeyLater(cfg.byKeyLimit)
	}
	if err := p.load(); err != nil {
		db.Close()
		return nil, err
	}
	if err := p.rebuildSnapshots(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return p, nil
}

// initialMmapSize is the address space the projection file is mapped into when
// opened: a file that grows past its mapping is mapped again, and each time the
// write transaction copies every node it holds out of the old mapping and waits
// for every reader to finish. Reserving it up front (address space, not memory:
// only the file's pages in use are read in) spares a growing projection those
// stalls until it is this large. Not on Windows, where bbolt grows the file to
// its mapping, nor where addresses are 32 bits.
var initialMmapSize = func() int {
	if runtime.GOOS == "windows" || strconv.IntSize < 64 {
		return 0
	}
	return 1 << 30
}()

// openBolt opens the projection file and readies it for this version. A file an
// older fold built is refused (*staleFoldError) unless asIs, when it is served
// as that fold built it, without this fold's mark (refold).
func openBolt(cfg Config, asIs bool) (*bolt.DB, error) {
	db, err := bolt.Open(cfg.Path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: !cfg.Sync, NoGrowSync: !cfg.Sync, NoFreelistSync: true,
		InitialMmapSize: initialMmapSize})
	if err != nil {
		return nil, fmt.Errorf("projector: open %s: %w", cfg.Path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		have, stale, err := staleFold(tx)
		if err != nil || (stale && !asIs) {
			if err == nil {
				err = &staleFoldError{have: have}
			}
			return err
		}
		for _, b := range append(allBuckets, bucketStreams) {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := addSums(tx); err != nil {
			return err
		}
		if err := layoutLedger(tx); err != nil {
			return err
		}
		if stale {
			return nil // served as the older fold built it: not marked as this fold's
		}
		return stampFold(tx)
	})
	if stale := (*staleFoldError)(nil); errors.As(err, &stale) {
		db.Close()
		return nil, err
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("projector: init %s: %w", cfg.Path, err)
	}
	return db, nil
}

// check runs bbolt's consistency check over tx and joins what it finds.
func check(tx *bolt.Tx) error {
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func dirtyMarker(path string) string { return path + ".open" }

func (p *Projector) load() error {
	var rows []contract.Row
	err := p.db.View(func(tx *bolt.Tx) error {
		for _, s := range wire.Streams {
			ckpt, err := get(tx, bucketMeta, checkpointKey(s))
			if err != nil {
				return err
			}
			p.applied[s].Store(readU64(ckpt))
		}
		var err error
		if p.folded, err = loadFolded(tx); err != nil {
			return err
		}
		if err := p.revoked.load(tx); err != nil {
			return err
		}
		if err := p.upstreams.load(tx); err != nil {
			return err
		}
		return each(tx, bucketRows, func(k, v []byte) error {
			var r struct {
				Seq *int64 `json:"seq"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("row %s: %w", k, err)
			}
			rows = append(rows, contract.Row{Key: string(k), Seq: r.Seq})
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("projector: load: %w", err)
	}
	p.index.load(rows)
	return nil
}

// Applied is the last sequence of stream that has been committed to the projection.
func (p *Projector) Applied(stream string) uint64 {
	if a, ok := p.applied[stream]; ok {
		return a.Load()
	}
	return 0
}

// WaitFor blocks until stream has been applied up to seq, ctx is done, or the
// projector closes. Once the log no longer matches the projection it returns the
// *LogBehindError at once (see ErrLogBehind): a sequence the log hands out then
// may be one the projection has already applied from another stream.
func (p *Projector) WaitFor(ctx context.Context, stream string, seq uint64) error {
	for {
		if err := p.failure(); err != nil {
			return err
		}
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		if p.Applied(stream) >= seq {
			return nil
		}
		// Somebody is waiting: a lingering batch commits now.
		select {
		case p.hurry[stream] <- struct{}{}:
		default:
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.closed:
			return ErrClosed
		case <-p.failed:
		}
	}
}

// Settle waits until stream is applied as far as the log held it when called: a
// read after Settle sees every event appended before it (read-your-writes for a
// reader that did not append the event itself, such as a receipt a worker wrote).
// It asks the log for the stream's end, so it costs a round trip; it checks on the
// way that the log still holds what the projection has applied (ErrLogBehind).
func (p *Projector) Settle(ctx context.Context, stream string) error {
	if p.cfg.Log == nil {
		return errors.New("projector: Settle needs Config.Log")
	}
	st, err := p.verify(ctx, stream)
	if err != nil {
		return err
	}
	return p.WaitFor(ctx, stream, st.LastSeq)
}

// SettleKey makes sure the projection is not behind the log for the directory
// key key: it asks the log for the sequence of the key's last mutation and, when
// the projection has not applied it yet, waits until it has. It returns that
// sequence (0 when the key was never written). A read or a write that misses or
// conflicts on a key calls it before it answers so: the key may have been written
// through another node, and this projection may not have folded that write yet.
// It costs a round trip to the log. A key that is not a valid row key (one that
// would make a subject pattern, such as "a.>") was never written: 0, at once.
func (p *Projector) SettleKey(ctx context.Context, key string) (uint64, error) {
	if p.cfg.Log == nil {
		return 0, errors.New("projector: SettleKey needs Config.Log")
	}
	if !wire.ValidKey(key) {
		return 0, nil
	}
	seq, err := p.cfg.Log.LastSubjectSeq(ctx, wire.ControlStream, wire.DirectorySubject(key))
	if err != nil || seq == 0 {
		return seq, err
	}
	return seq, p.WaitFor(ctx, wire.ControlStream, seq)
}

// WatchDirectory calls fn once for every live key now, then after every committed
// directory change. It may be called at any time, also while Run is folding.
func (p *Projector) WatchDirectory(fn func(key string, deleted bool)) {
	p.hooksMu.Lock()
	defer p.hooksMu.Unlock()
	p.dirWatchers = append(p.dirWatchers, fn)
	for _, k := range p.index.keys() {
		fn(k, false)
	}
}

// OnApplied registers fn to be called after every committed batch, on the goroutine
// that follows that stream, in stream order. fn must not block for long, nor keep
// batch after it returns: a catch-up reuses it for a later batch. It may be
// called at any time, also while Run is folding.
func (p *Projector) OnApplied(fn func(stream string, batch []eventlog.Stored)) {
	p.hooksMu.Lock()
	p.appliedSubs = append(p.appliedSubs, fn)
	p.hooksMu.Unlock()
}

// OnSeen registers fn to be called with every event this projector reads while it
// follows the log, in stream order, as soon as it arrives: before the batch holding
// it commits (see Config.Linger), so a reader of the projection may not see it yet.
// fn runs on the goroutine reading that stream and must not block for long, nor
// keep s past its return (a copy of *s it may keep), nor s.Data's bytes past the
// commit of the batch holding s (a copy of them it may keep): the data stream's
// packs are read into buffers used again for later packs. It may be called at
// any time, also while Run is folding.
func (p *Projector) OnSeen(fn func(stream string, s *eventlog.Stored)) {
	p.hooksMu.Lock()
	p.seenSubs = append(p.seenSubs, fn)
	p.hooksMu.Unlock()
}

func (p *Projector) seen(stream string, s *eventlog.Stored) {
	if stream == wire.DataStream {
		p.seenReqs.see(s)
	}
	p.hooksMu.RLock()
	defer p.hooksMu.RUnlock()
	for _, fn := range p.seenSubs {
		fn(stream, s)
	}
}

// Run folds both streams from their checkpoints until ctx is done or a batch fails.
// It first checks that the log still holds what the projection has applied, and
// checks again whenever JetStream announces a change to a stream and every
// Config.LogCheck; on a mismatch it stops and returns a *LogBehindError (see
// ErrLogBehind).
func (p *Projector) Run(ctx context.Context) error {
	if p.cfg.Log == nil {
		return errors.New("projector: Run needs Config.Log")
	}
	kick, stop := p.watchStreams()
	defer stop()
	if err := p.verifyAll(ctx); err != nil {
		if ctx.Err() != nil && !errors.Is(err, ErrLogBehind) {
			return nil // stopped before it started
		}
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(wire.Streams)+1)
	go func() {
		err := p.guard(ctx, kick)
		if err != nil {
			cancel()
		}
		errc <- err
	}()
	for _, s := range wire.Streams {
		go func(stream string) {
			opts := eventlog.FollowOptions{Max: p.cfg.BatchSize, Hurry: p.hurry[stream],
				Seen: func(s *eventlog.Stored) { p.seen(stream, s) }}
			if stream == wire.DataStream {
				// The fold copies what it keeps of an event, and so do the
				// OnSeen hooks and seenRequests (until the batch commits).
				opts.Transient = true
				opts.Linger, opts.LingerFrom = p.cfg.Linger, 2
				if p.cfg.lingerFrom > 0 {
					opts.LingerFrom = p.cfg.lingerFrom
				}
			}
			var values arena
			err := p.cfg.Log.FollowBatches(ctx, stream, p.Applied(stream)+1, opts, func(b []eventlog.Stored) error {
				return p.applyFollowed(stream, b, &values)
			})
			if err != nil {
				cancel()
			}
			errc <- err
		}(s)
	}
	var errs []error
	for range cap(errc) {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.failure(); err != nil {
		return err // the followers' errors only repeat it
	}
	return errors.Join(errs...)
}

// CatchUp folds both streams from their checkpoints up to their last sequence at
// the time of the call and returns; used by replay. When ctx ends first, it
// returns an error wrapping ctx's cause; what committed before stays, and a
// later catch-up goes on from there.
func (p *Projector) CatchUp(ctx context.Context, progress Progress) error {
	return p.catchUp(ctx, func(s string) uint64 { return p.Applied(s) + 1 }, progress)
}

// CatchUpFrom re-delivers both streams from sequence from up to their current end
// through the normal apply path (events at or below the checkpoint are skipped).
func (p *Projector) CatchUpFrom(ctx context.Context, from uint64) error {
	return p.catchUp(ctx, func(string) uint64 { return from }, nil)
}

// catchUpLinger is how long a catch-up's batch that is not full waits for more
// events: nobody waits on its commits, and each commit rewrites the pages the
// batch touched, so fewer and fuller batches cost less per event.
const catchUpLinger = 20 * time.Millisecond

func (p *Projector) catchUp(ctx context.Context, from func(stream string) uint64, progress Progress) error {
	if p.cfg.Log == nil {
		return errors.New("projector: CatchUp needs Config.Log")
	}
	if err := p.verifyAll(ctx); err != nil {
		return err
	}
	spans := make([]foldSpan, 0, len(wire.Streams))
	for _, s := range wire.Streams {
		last, err := p.cfg.Log.LastSeq(ctx, s)
		if err != nil {
			return err
		}
		spans = append(spans, foldSpan{stream: s, from: from(s), to: last})
	}
	// The fold copies what it keeps of an event (as a follower's does), and a
	// batch's events are read until it commits: foldRanges hands them back then.
	opts := eventlog.FollowOptions{Max: p.cfg.BatchSize, Linger: catchUpLinger, Transient: true, HandsBack: true}
	err := p.foldRanges(ctx, spans, opts, progress)
	if ctx.Err() != nil {
		// ctx ended: the catch-up stopped short of the end it was to reach (the
		// log's read says where, wrapping ctx's cause).
		if err == nil {
			err = context.Cause(ctx)
		}
		err = fmt.Errorf("projector: catch-up stopped before the end of the log: %w", err)
	}
	if err == nil {
		err = p.putByKeyLater()
	}
	// A rebuild's file is written out while it folds (syncBehind): the fsync
	// still running ends before Close's.
	if serr := p.behind.wait(); err == nil {
		err = serr
	}
	return err
}

// putByKeyLater puts the by-key entries a rebuild's fold holds back
// (bykey_later.go), in a transaction of their own.
func (p *Projector) putByKeyLater() error {
	if p.byKeyLater == nil || p.byKeyLater.count == 0 {
		return nil
	}
	return p.db.Update(func(tx *bolt.Tx) error {
		setFill(tx)
		return p.byKeyLater.put(tx, newLedgerBatch(tx, p.byKeyLater.count, nil))
	})
}

// applyFollowed applies a batch the projector follows the log for: the values
// it stores are carved from values, which it uses again for the next batch
// once this one is committed (bbolt keeps a value until then).
func (p *Projector) applyFollowed(stream string, batch []eventlog.Stored, values *arena) error {
	err := p.apply(stream, batch, nil, values)
	values.resetKeeping(liveArenaChunks)
	return err
}

// apply commits one batch with its checkpoint, then publishes the change. Once the
// log no longer matches the projection it commits nothing. pre, when not nil, is
// the batch prepared (prepare.go): pre[i] is batch[i]'s. values, when not nil, is
// where the values of the batch's puts are built, kept until the caller resets it
// after apply returns.
func (p *Projector) apply(stream string, batch []eventlog.Stored, pre []prepared, values *arena) error {
	if err := p.failure(); err != nil {
		return err
	}
	var fx effects
	err := p.db.Update(func(tx *bolt.Tx) error {
		setFill(tx)
		v, err := get(tx, bucketMeta, checkpointKey(stream))
		if err != nil {
			return err
		}
		ckpt := readU64(v)
		f := folder{tx: tx, breaker: p.cfg.Breaker, fx: &fx, ledger: newLedgerBatch(tx, len(batch), values), snapEvery: p.cfg.snapEvery, snapFullEvery: p.cfg.snapFullEvery,
			byKey: p.byKeyLater}
		for i := range batch {
			if batch[i].Seq <= ckpt {
				continue // already applied: replaying an event is harmless
			}
			if pre != nil {
				f.pre = &pre[i]
			}
			if err := f.fold(&batch[i]); isDamage(err) {
				return err // a value the fold read is damaged: fold nothing more
			} else if err != nil {
				fx.skip(&batch[i], err)
			}
		}
		if err := f.ledger.flush(); err != nil {
			return err
		}
		if f.byKey != nil && f.byKey.full() {
			if err := f.byKey.put(tx, f.ledger); err != nil {
				return err
			}
		}
		if p.cfg.beforeCommit != nil {
			if err := p.cfg.beforeCommit(stream, batch); err != nil {
				return err
			}
		}
		last := batch[len(batch)-1].Seq
		if last <= ckpt {
			return nil
		}
		return put(tx, bucketMeta, checkpointKey(stream), u64(last))
	})
	if err != nil {
		if derr := p.damaged(err); derr != err {
			return derr
		}
		return fmt.Errorf("projector: apply %s batch ending %d: %w", stream, batch[len(batch)-1].Seq, err)
	}
	p.reportSkips(stream, fx.skips) // before WaitFor returns: a waiter sees them counted
	p.rows.invalidate(fx.dir)
	p.revoked.add(fx.revoked)
	p.upstreams.apply(fx.upstreams)
	p.hooksMu.RLock()
	defer p.hooksMu.RUnlock()
	for _, c := range fx.upstreams {
		for _, w := range p.upstreamWatchers {
			w(c.name)
		}
	}
	p.index.apply(fx.dir)
	for _, c := range fx.dir {
		for _, w := range p.dirWatchers {
			w(c.key, c.deleted)
		}
		for _, w := range p.rowWatchers {
			w(c.key, c.row)
		}
	}
	if last := batch[len(batch)-1].Seq; last > p.applied[stream].Load() {
		p.applied[stream].Store(last)
	}
	if stream == wire.DataStream {
		p.seenReqs.committed(batch[len(batch)-1].Seq)
	}
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	p.cfg.Metrics.batch(stream, len(batch), len(fx.skips))
	for _, fn := range p.appliedSubs {
		fn(stream, batch)
	}
	return nil
}

// Close closes the bbolt file and, on a clean close, seals it (writes its size and
// SHA-256 beside it, for the next Open to compare) and removes the unclean-stop
// marker. A file in which a read found a damaged value is left unsealed, with its
// marker, so that the next Open checks it, finds the damage and rebuilds it.
func (p *Projector) Close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.closed)
		if !p.cfg.Sync {
			err = p.db.Sync()
		}
		if cerr := p.db.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err == nil && !errors.Is(p.failure(), ErrDamaged) {
			if serr := writeSeal(p.cfg.Path); serr != nil {
				p.cfg.Logger.Warn("projection not sealed; the next start checks it with bbolt's check only", "path", p.cfg.Path, "err", serr)
			}
			os.Remove(dirtyMarker(p.cfg.Path))
		}
	})
	return err
}

// abandon closes p's file as Close does, without writing it out or sealing it:
// the partial file of a rebuild that stopped, about to be removed.
func (p *Projector) abandon() {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.db.Close()
	})
}

// view runs fn in a read transaction of the projection; a value that fails its
// checksum there fails the projector (damaged).
func (p *Projector) view(fn func(*bolt.Tx) error) error {
	if err := p.db.View(fn); err != nil {
		return p.damaged(err)
	}
	return nil
}

// damaged turns a value that failed its checksum into the projector's failure, a
// *DamagedError that Run, WaitFor, Settle and every later batch return; the file
// is not served from again. Any other error comes back as it is.
func (p *Projector) damaged(err error) error {
	var ve *valueError
	if !isDamage(err) || !errors.As(err, &ve) {
		return err
	}
	derr := p.fail(&DamagedError{Path: p.cfg.Path, Reason: ve.Error(), Running: true})
	p.cfg.Logger.Error("projection damaged: a stored value does not match its checksum; stopping",
		"path", p.cfg.Path, "bucket", ve.bucket, "key", clip(ve.key))
	return derr
}

// Done is closed once Close has run.
func (p *Projector) Done() <-chan struct{} { return p.closed }

// Path is the projection file.
func (p *Projector) Path() string { return p.cfg.Path }
