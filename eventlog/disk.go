package eventlog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
)

// DiskRoom is the free space the embedded store's disk must have again, after it
// was found full, before the log restarts JetStream and takes writes again.
const DiskRoom = 16 << 20

// diskRecheck is how often a full disk is looked at for room.
const diskRecheck = time.Second

// diskGuard is the embedded server's full-disk state. When a write finds no space,
// the server's store logs the error, answers no one (the append would wait out its
// timeout) and refuses every later write until JetStream restarts. The guard,
// tripped by that log line, makes every append fail at once with ErrDiskFull, those
// waiting for their acknowledgement included, and Log.watchDisk restarts JetStream
// once the disk has DiskRoom free.
type diskGuard struct {
	dir   string
	mu    sync.Mutex // serializes changes of state
	state atomic.Pointer[diskState]
	wake  chan struct{} // capacity 1: tells watchDisk the disk was found full
}

// diskState is one period of the disk: while it has room, or while it is full.
type diskState struct {
	filled context.Context // done once the disk is found full
	fill   context.CancelFunc
	err    error // the refusal while full; nil while there is room
}

func newDiskGuard(dir string) *diskGuard {
	g := &diskGuard{dir: dir, wake: make(chan struct{}, 1)}
	g.roomAgain()
	return g
}

// noSpace records that a write found the disk full.
func (g *diskGuard) noSpace() {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	if st.err != nil {
		return
	}
	free, _ := freeBytes(g.dir)
	g.state.Store(&diskState{filled: st.filled, fill: st.fill, err: diskFullError(g.dir, free)})
	st.fill() // after the store: a waiter woken by it finds the refusal
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// roomAgain records that the disk has room: appends are taken again.
func (g *diskGuard) roomAgain() {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	g.state.Store(&diskState{filled: ctx, fill: cancel})
}

// refusal is the error every append gets while the disk is full, else nil.
func (g *diskGuard) refusal() error {
	if g == nil {
		return nil
	}
	return g.state.Load().err
}

// filled is done once the disk is found full: an append waiting for its
// acknowledgement stops waiting. Nil for a log without a guard (an external
// cluster), which never fills.
func (g *diskGuard) filled() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.state.Load().filled.Done()
}

// refusalOnceFilled is the refusal of an append that was waiting when filled
// was done: the guard's, or, if the disk had room again meanwhile, one without
// the figures.
func (g *diskGuard) refusalOnceFilled() error {
	if g == nil {
		return ErrDiskFull
	}
	if err := g.refusal(); err != nil {
		return fmt.Errorf("%w; an append in flight when it filled may not be stored: send it again once there is room", err)
	}
	return fmt.Errorf("%w: an append in flight when the log's store %s filled may not be stored: send it again", ErrDiskFull, g.dir)
}

// diskFullError is the refusal while dir's disk is full: the one place its text
// is made.
func diskFullError(dir string, free uint64) error {
	return fmt.Errorf("%w: the log's store %s has %s free; free space on that disk (or move the data dir to a larger one): "+
		"the log takes writes again by itself once %s are free; nothing was stored", ErrDiskFull, dir, mib(free), mib(DiskRoom))
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// watchDisk waits until the guard trips, then until the disk has DiskRoom free,
// restarts JetStream and takes writes again; until the log closes.
func (l *Log) watchDisk() {
	defer close(l.diskDone)
	for {
		select {
		case <-l.closing:
			return
		case <-l.disk.wake:
		}
		l.cfg.Logger.Error("eventlog: the log's disk is full; appends are refused until it has room again", "store", l.disk.dir, "room", mib(DiskRoom))
		tick := time.NewTicker(diskRecheck)
		for l.disk.refusal() != nil {
			select {
			case <-l.closing:
				tick.Stop()
				return
			case <-tick.C:
			}
			if free, ok := freeBytes(l.disk.dir); ok && free < DiskRoom {
				continue
			}
			if err := l.restartJetStream(); err != nil {
				l.cfg.Logger.Error("eventlog: JetStream did not start again on the store's disk; trying again", "store", l.disk.dir, "err", err)
				continue
			}
			l.disk.roomAgain()
			l.cfg.Logger.Info("eventlog: the log's disk has room again; appends are taken", "store", l.disk.dir)
		}
		tick.Stop()
	}
}

// restartJetStream stops the embedded server's JetStream and starts it again on
// the same store: a stream whose store failed a write refuses every later one
// until then. Consumers resume once their pulls miss a heartbeat; State waits for
// the restart to end.
func (l *Log) restartJetStream() error {
	l.restart.Lock()
	defer l.restart.Unlock()
	if err := l.srv.ShutdownJetStream(); err != nil {
		return err
	}
	if err := l.srv.EnableJetStream(&server.JetStreamConfig{StoreDir: l.cfg.storeDir()}); err != nil {
		return err
	}
	if l.auth != nil {
		if err := l.auth.enableJetStream(l.srv); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.StartTimeout)
	defer cancel()
	if err := l.probe(ctx); err != nil {
		return err
	}
	for _, name := range wire.Streams { // restored from the store; the handles Open made still name them
		if _, err := l.js.Stream(ctx, name); err != nil {
			return fmt.Errorf("eventlog: stream %s after JetStream's restart: %w", name, err)
		}
	}
	return nil
}
