package dispatcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/suggest"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
)

// ConsumerName is the durable pull consumer every worker on every node shares.
const ConsumerName = "capdir-dispatch"

// Settings are what an operator sets of a Service: its bounds and timings, apart
// from the handles and wiring of ServiceConfig. A zero field takes its default.
type Settings struct {
	// Workers is how many invocations this process runs at once (default 16 per CPU).
	Workers int
	// AckWait is how long a worker may hold a request before it is redelivered
	// (default 30s).
	AckWait time.Duration
	// MaxDeliver bounds redeliveries of one request (default 5).
	MaxDeliver int
	// RunTimeout bounds one runner call (default 60s).
	RunTimeout time.Duration
	// MaxPayload is the payload ceiling on a request body (default 1 MiB, and never
	// more than the log accepts in one event, JSON-encoded).
	MaxPayload int
	// ResultCap bounds the result stored on a receipt, in bytes as the event
	// carries it, JSON-encoded (default 1 MiB). A receipt must also fit in one
	// event: see receiptBudget.
	ResultCap int
	// Suggestions is how many did_you_mean keys an unknown key gets (default 5).
	Suggestions int
	// MaxDepth bounds how deep steps nest (a flow's steps are at depth 1, their
	// own steps at 2, …; DefaultMaxDepth when 0): a deeper step is refused with
	// ERR:flow:depth:<depth>><max>. See sub.go.
	MaxDepth int
	// MaxTreeSteps bounds the steps of one call tree, at every depth together
	// (DefaultMaxTreeSteps when 0): nesting multiplies, and a few flows of many
	// steps calling each other would otherwise make an unbounded number of calls
	// from one request. A step past the bound is refused with
	// ERR:flow:tree_steps:<n>><max>. See sub.go.
	MaxTreeSteps int
	// Approvals configures the watcher's approvals of sensitive calls (approval.go).
	Approvals ApprovalConfig
	// MaxCalls bounds the bus clients' calls (responder.go) this node answers at
	// once, each holding a goroutine and a waiter until its receipt is in the log
	// (DefaultMaxCalls when 0): a call past it is refused at once, nothing
	// appended, with CALL_REFUSED and retry true.
	MaxCalls int
}

func (c *Settings) setDefaults() {
	if c.Workers == 0 {
		c.Workers = DefaultWorkers()
	}
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 5
	}
	if c.RunTimeout == 0 {
		c.RunTimeout = 60 * time.Second
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = 1 << 20
	}
	if c.ResultCap == 0 {
		c.ResultCap = 1 << 20
	}
	if c.Suggestions == 0 {
		c.Suggestions = 5
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxTreeSteps == 0 {
		c.MaxTreeSteps = DefaultMaxTreeSteps
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	c.Approvals.setDefaults()
}

// Validate reports every problem with c, its defaults applied, at once: a node
// checks its settings with it before it creates anything.
func (c Settings) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, errors.New("dispatcher: workers must be at least 1 (--workers)"))
	}
	if c.AckWait < 0 {
		errs = append(errs, fmt.Errorf("dispatcher: ack wait %v must not be negative (--ack-wait: give a duration such as 30s, 0 for the default)", c.AckWait))
	}
	if c.MaxDeliver < 1 {
		errs = append(errs, errors.New("dispatcher: max deliver must be at least 1"))
	}
	if c.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("dispatcher: max depth %d must not be negative (--flow-max-depth: give a number of 1 or more, 0 for the default)", c.MaxDepth))
	}
	if c.MaxTreeSteps < 0 {
		errs = append(errs, fmt.Errorf("dispatcher: max tree steps %d must not be negative (0 for the default)", c.MaxTreeSteps))
	}
	if c.MaxCalls < 0 {
		errs = append(errs, fmt.Errorf("dispatcher: max calls %d must not be negative (0 for the default, %d)", c.MaxCalls, DefaultMaxCalls))
	}
	return errors.Join(errs...)
}

// ServiceConfig configures a Service.
type ServiceConfig struct {
	Log       *eventlog.Log
	Projector *projector.Projector
	Runners   runner.Runners
	// Env resolves credentials for the breaker's rotation check; os.LookupEnv when nil.
	Env runner.Env
	// TagSalt keys credential tags; derive it with TagSaltFor(terminal key).
	TagSalt string
	Breaker breaker.Config
	// Settings are the service's own bounds and timings.
	Settings
	// Name identifies this node's workers on receipts (default the hostname).
	Name   string
	Clock  func() time.Time
	Logger *slog.Logger
	// Metrics counts receipts (see NewMetrics); a private, unregistered set when nil.
	Metrics *Metrics
	// Tokens verifies the capability tokens of every caller that is not the owner;
	// required (see gate.Config.Tokens). Keep one per process: it caches.
	Tokens *token.Verifier
	// Revoked reports whether a token id has been revoked; Projector.Revoked when nil.
	Revoked func(jti string) bool
	// HeldFile is where the workers record the requests they hold, so that a
	// restart on the same file takes back at once the calls a crash cut (held.go);
	// "" records nothing, and a crash's calls wait for AckWait on a shared log.
	// On a log no other node shares nothing is recorded either (reclaim hands
	// those calls back), but the file is still emptied at the start.
	// One process at a time may use a file: give each node its own (HeldPath).
	HeldFile string
	// Tracer makes the spans of the calls this service handles (trace.go); nil
	// is tracing off.
	Tracer *tracing.Tracer

	// beforeReceipt, when set, runs after the runner and before the receipt is
	// appended; returning an error abandons the request unacknowledged, as a
	// crash there would (tests).
	// beforeReceiptAppend, when set, runs before each append of a receipt, with
	// the event the worker is about to append (tests: another node's receipt
	// stored first).
	beforeReceiptAppend func(rc *wire.Receipt, ev wire.Event)
	beforeReceipt       func(req *wire.InvocationRequest) error
	// beforeAck, when set, runs after the receipt is appended and before the request
	// is acknowledged; returning an error abandons the ack (tests).
	beforeAck func(req *wire.InvocationRequest) error
}

func (c *ServiceConfig) setDefaults() {
	if c.Env == nil {
		c.Env = os.LookupEnv
	}
	c.Settings.setDefaults()
	if c.Name == "" {
		c.Name, _ = os.Hostname()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics, _ = NewMetrics(nil) // registers nothing, so it cannot fail
	}
	if c.Revoked == nil && c.Projector != nil {
		c.Revoked = c.Projector.Revoked
	}
}

// Validate reports every problem at once.
func (c *ServiceConfig) Validate() error {
	var errs []error
	if c.Log == nil {
		errs = append(errs, errors.New("dispatcher: a log is required"))
	}
	if c.Projector == nil {
		errs = append(errs, errors.New("dispatcher: a projector is required"))
	}
	if len(c.Runners) == 0 {
		errs = append(errs, errors.New("dispatcher: no runners configured"))
	}
	if err := c.Settings.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Tokens == nil {
		errs = append(errs, errors.New("dispatcher: a token verifier (Tokens) is required"))
	}
	return errors.Join(errs...)
}

// DefaultWorkers is the default number of workers per process: 16 per CPU. A worker
// spends most of a call waiting on the log, so several per CPU keep the CPUs busy;
// capdir bench measured 32 workers ~10% faster than 8 at 64 calls in flight on two
// CPUs, and 64 no faster than 32.
func DefaultWorkers() int { return 16 * runtime.NumCPU() }

// TagSaltFor derives the credential-tag salt from the deployment's owner key, so
// every node and every restart computes the same tags.
func TagSaltFor(terminalKey string) string {
	h := sha256.Sum256([]byte("capdir credential tag\x00" + terminalKey))
	return hex.EncodeToString(h[:])
}

// Service runs dispatcher workers and lets callers invoke rows and wait for the
// receipt. Start it once; stop it with Drain (calls in flight finish) or Stop
// (they are cancelled), both idempotent.
type Service struct {
	// startSeq is the data stream's last sequence when Start ran (see handle).
	startSeq      uint64
	cfg           ServiceConfig
	receiptBudget int // JSON-encoded bytes a receipt may spend on body and result
	waiters       *waiters
	suggest       *suggest.Suggester
	gate          *gate.Gate
	sharedLog     bool // other processes may append to the log (revocation.go)
	revocations   revocationFence
	elections     leaderElections // the dispatch consumer's (runonce.go)
	heldFile      *heldFile       // nil without ServiceConfig.HeldFile
	calls         *calls          // the bus clients' calls (responder.go); nil until Start
	engineActor   string          // "engine:" and the node's name: a receipt's actor

	mu      sync.Mutex
	cc      eventlog.Consumption
	work    chan eventlog.Msg
	held    []heldSlot
	workers sync.WaitGroup // the workers
	wg      sync.WaitGroup // the heartbeat
	cancel  context.CancelFunc

	// Stopping: draining is closed when Drain (or Close) begins; the first caller
	// drains, later ones wait for closed. hurry cancels the calls in flight once.
	stopping  atomic.Bool
	draining  chan struct{}
	hurryOnce sync.Once
	cutErr    error // what hurry cut short, under mu
	stopErr   error // the first Drain's result, read after closed
	closed    chan struct{}
}

// NewService wires a service to its projector (receipt waiters and the did_you_mean
// index). Call it before the projector's Run.
func NewService(cfg ServiceConfig) (*Service, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A request and a receipt are one event each: a body, and a receipt's body and
	// result together, must fit in what the log accepts, JSON-encoded.
	fit := cfg.Log.MaxPayload() - envelopeReserve
	cfg.MaxPayload = min(cfg.MaxPayload, fit)
	s := &Service{cfg: cfg, receiptBudget: fit, waiters: newWaiters(newReceiptIDs(cfg.TagSalt)), suggest: suggest.New(),
		draining: make(chan struct{}), closed: make(chan struct{}), sharedLog: sharedLog(cfg.Log), engineActor: "engine:" + cfg.Name}
	g, err := gate.New(gate.Config{
		MaxPayload: cfg.MaxPayload, Breaker: cfg.Breaker, Env: cfg.Env, TagSalt: cfg.TagSalt, Clock: cfg.Clock,
		Suggest: func(key string) []string { return s.suggest.Suggest(key, cfg.Suggestions) },
		Tokens:  cfg.Tokens, Revoked: cfg.Revoked, Approval: s.approvalState,
	})
	if err != nil {
		return nil, err
	}
	s.gate = g
	s.waiters.read = s.readReceiptAt
	cfg.Projector.OnSeen(s.waiters.seen)
	cfg.Projector.WatchDirectory(func(key string, deleted bool) {
		if deleted {
			s.suggest.Remove(key)
		} else {
			s.suggest.Add(key)
		}
	})
	return s, nil
}

// Start creates (or joins) the durable consumer and starts the workers.
func (s *Service) Start(ctx context.Context) error {
	cons, err := s.cfg.Log.OpenDurable(ctx, wire.DataStream, eventlog.Durable{
		Name:          ConsumerName,
		Subjects:      wire.AllRequestSubjects, // capdir's own requests and the bus clients'
		AckWait:       s.cfg.AckWait,
		MaxDeliver:    s.cfg.MaxDeliver,
		MaxAckPending: 64 * 1024,
	})
	if err != nil {
		return fmt.Errorf("dispatcher: consumer: %w", err)
	}
	if err := s.reclaim(ctx, cons); err != nil {
		return err
	}
	// A request appended before this start may have run under an earlier process
	// whose acknowledgement JetStream had not yet made durable when it died: such a
	// request can come back as a first delivery. Every request up to here is
	// checked for its receipt before it runs (handle).
	last, err := s.cfg.Log.LastSeq(ctx, wire.DataStream)
	if err != nil {
		return fmt.Errorf("dispatcher: data stream: %w", err)
	}
	s.startSeq = last
	// The held file's records are the requests an earlier process held when it
	// died: taken back below, before anything else is pulled (takeBack).
	var held []heldRecord
	if s.cfg.HeldFile != "" {
		if s.heldFile, held, err = openHeldFile(s.cfg.HeldFile, s.cfg.Workers, s.cfg.Logger); err != nil {
			return err
		}
	}
	if err := s.elections.watch(cons); err != nil {
		s.cfg.Logger.Warn("dispatcher: the dispatch consumer's leader elections are not watched", "err", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.calls = newCalls(s.cfg.MaxCalls, s.cfg.Log.Packing() && !s.sharedLog)
	// A delivered request waits here for a free worker; the buffer spares the
	// consumer's callback a hand-off per request.
	s.work = make(chan eventlog.Msg, s.cfg.Workers)
	s.held = make([]heldSlot, s.cfg.Workers)
	for i := range s.held {
		s.held[i].file, s.held[i].index = s.recordsHeld(), i
		s.workers.Add(1)
		go s.worker(runCtx, &s.held[i])
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		keepInProgress(runCtx, s.held, s.cfg.AckWait/3)
	}()
	s.startSweeper(runCtx)
	for _, m := range s.takeBack(ctx, cons, held) {
		s.deliver(m)
	}
	cc, err := cons.Consume(2*s.cfg.Workers, s.deliver)
	if err != nil {
		s.Close()
		return fmt.Errorf("dispatcher: consume: %w", err)
	}
	s.mu.Lock()
	s.cc = cc
	s.mu.Unlock()
	if err := s.startCalls(); err != nil {
		s.Close()
		return err
	}
	return nil
}

// reclaim hands back, for delivery at once, the requests the consumer counts as
// delivered and not acknowledged when no other node consumes the log: those were
// held by an earlier process on this data dir that died with them (a stop gives
// back what it did not finish), and would otherwise wait out AckWait before
// running again. The consumer is reset to its acknowledgement floor: the requests
// after it are delivered again, and every one appended before this start is
// checked for its receipt before it runs (handle), so one acknowledged out of
// order is not run twice. On a shared log the pending requests may be another
// node's calls in flight: they are left to AckWait. So are they while the
// consumer has pulls waiting: another service of this process is running.
func (s *Service) reclaim(ctx context.Context, cons *eventlog.Consumer) error {
	unacked, floor, waiting := cons.Backlog()
	if s.sharedLog || unacked == 0 || waiting > 0 {
		return nil
	}
	if err := cons.Reset(ctx); err != nil {
		return fmt.Errorf("dispatcher: deliver again the requests an earlier process held: %w", err)
	}
	s.cfg.Logger.Info("dispatcher: requests an earlier process held are delivered again at once", "pending", unacked, "from_seq", floor+1)
	return nil
}

// deliver is the consumer's callback: it hands a request to a free worker, or,
// once draining, gives it back for another worker or the next start.
func (s *Service) deliver(m eventlog.Msg) {
	select {
	case <-s.draining:
		giveBack(m)
		return
	default:
	}
	select {
	case s.work <- m:
	case <-s.draining:
		giveBack(m)
	}
}

// giveBackDelay is how long a request handed back by a stopping node waits before
// JetStream delivers it again. Not at once: the stopping node's pulls may still be
// outstanding, and a request redelivered to it at once would be handed back again,
// each time counting against MaxDeliver until JetStream gave up on it.
const giveBackDelay = 2 * time.Second

// giveBack returns m to the log for another worker or the next start.
func giveBack(m eventlog.Msg) { m.NakWithDelay(giveBackDelay) }

// worker runs requests until the work channel closes. A request it takes after
// draining began is given back, not started.
func (s *Service) worker(runCtx context.Context, slot *heldSlot) {
	defer s.workers.Done()
	// Each worker's calls derive from its own context: contexts derived from one
	// shared parent contend on its list of children.
	wctx, wcancel := context.WithCancel(runCtx)
	defer wcancel()
	for m := range s.work {
		select {
		case <-s.draining:
			giveBack(m)
			continue
		default:
		}
		s.handle(wctx, slot.take(m))
		slot.release()
	}
}

// Drain stops the service gracefully, as jetstream's ConsumeContext.Drain does
// for a consumer: it stops pulling requests at once and gives back (NAKs) those
// delivered but not started, so another worker or the next start runs them; the
// calls in flight run to the end and write their receipts and acks. When ctx ends
// first, the calls still in flight are cancelled as Close cancels them: they get
// no receipt and are NAKed, to be run again. Drain then returns an error matching
// ErrDrainCut and ctx's error; nil when nothing had to be cancelled.
//
// Drain and Close may be called any number of times, from any goroutine: the first
// call drains; a later one waits for it, and when its own ctx ends first it
// cancels the calls in flight. Every call returns the first call's result.
func (s *Service) Drain(ctx context.Context) error {
	if !s.stopping.CompareAndSwap(false, true) {
		select {
		case <-s.closed:
		case <-ctx.Done():
			s.hurry(ctx.Err())
			<-s.closed
		}
		return s.stopErr
	}
	s.stopErr = s.drain(ctx)
	close(s.closed)
	return s.stopErr
}

// Close is Drain with a context already cancelled: it stops taking requests,
// cancels the calls in flight (their requests are NAKed and will be redelivered)
// and waits for the workers. It is idempotent, and safe during or after Drain;
// it returns the first Drain's result.
func (s *Service) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.Drain(ctx)
}

// Done is closed once the service has drained (Drain or Close has finished).
func (s *Service) Done() <-chan struct{} { return s.closed }

func (s *Service) drain(ctx context.Context) error {
	close(s.draining)
	if s.work == nil {
		return nil // never started
	}
	s.calls.stopTaking()
	s.mu.Lock()
	cc := s.cc
	s.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		if cc != nil {
			// The callback gives back what is still buffered, so this is quick;
			// after it, nothing more is delivered.
			cc.Drain()
			<-cc.Closed()
		}
		close(s.work)
		s.workers.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-ctx.Done():
		s.hurry(ctx.Err())
		<-idle
	}
	s.cancel() // the heartbeat
	s.wg.Wait()
	s.calls.stop() // after the workers: a call whose request ran here has its reply
	s.elections.stop()
	if s.heldFile != nil {
		s.heldFile.close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cutErr
}

// Busy is how many of this process's workers are running a call now, and how
// many workers it has.
func (s *Service) Busy() (busy, workers int) {
	for i := range s.held {
		if s.held[i].holding() {
			busy++
		}
	}
	return busy, len(s.held)
}

// hurry cancels the calls in flight, once; cause is why.
func (s *Service) hurry(cause error) {
	s.hurryOnce.Do(func() {
		n := 0
		for i := range s.held {
			if s.held[i].holding() {
				n++
			}
		}
		if n > 0 {
			s.mu.Lock()
			s.cutErr = drainCut(n, cause)
			s.mu.Unlock()
			s.cfg.Logger.Warn("dispatcher: drain cut short; cancelling calls in flight", "calls", n, "cause", cause)
		}
		if s.cancel != nil {
			s.cancel()
		}
	})
}

// Closed is closed once Drain or Stop has finished.
func (s *Service) Closed() <-chan struct{} { return s.closed }

// ErrPayloadTooLarge is returned by Invoke for a body over the payload ceiling;
// nothing is appended.
var ErrPayloadTooLarge = errors.New("payload_too_large")

// envelopeReserve is what an event needs beside its body or result: the envelope,
// ids, fingerprints, timings and a shape preview.
const envelopeReserve = eventlog.EnvelopeReserve

// ErrPending is returned by Invoke when ctx ended before the receipt arrived; the
// returned receipt carries the invocation id and trace to look up later. It is
// returned only for a request the log holds (else ErrNotAppended).
var ErrPending = errors.New("dispatcher: receipt pending")

// Invoke appends an invocation request and waits for its receipt to be in the log.
// req.Key and req.Body are required; InvocationID and Trace are minted when empty.
// When ctx ends first, it returns the ids in a partial receipt and an error
// matching ErrPending, once the log holds the request (ErrNotAppended when it does
// not). The projection may fold the receipt a moment after Invoke returns:
// Projector.Settle waits for it.
func (s *Service) Invoke(ctx context.Context, req wire.InvocationRequest) (wire.Receipt, error) {
	return s.InvokeWait(ctx, req, 0)
}

// InvokeWait is Invoke waiting at most wait for the receipt (no limit but ctx's
// when wait is 0): for an entry point that bounds every call's wait, a
// deadline without a context made for each call (its timer, its channel and
// its place among the parent's children).
func (s *Service) InvokeWait(ctx context.Context, req wire.InvocationRequest, wait time.Duration) (wire.Receipt, error) {
	if err := s.checkInvoke(&req); err != nil {
		return wire.Receipt{}, err
	}
	sp := traceAppend(ctx, &req)
	ev, err := wire.PrepareRequest(s.cfg.Clock(), &req)
	if err != nil {
		sp.End()
		return wire.Receipt{}, err
	}
	sp.Str(tracing.AttrInvocation, req.InvocationID) // minted just now
	ch := s.waiters.add(req.InvocationID)
	// The receipt implies the request was stored, so the append's acknowledgement
	// is not awaited on its own: only its failure ends the wait early, and a wait
	// that ends without a receipt hands out the ids only for a stored request.
	f, err := s.appendRequest(&req, ev)
	sp.End()
	if err != nil {
		s.waiters.remove(req.InvocationID, ch)
		return pendingReceipt(&req), err
	}
	return s.await(ctx, wait, &req, ch, f, &ev)
}

// appendRequest appends ev, the event of req, on capdir's own request subject:
// in a pack with others (eventlog.Packed) when its invocation id was minted
// from its event id, so that no other request carries it and a worker never
// needs to tell two of them apart within one message; alone under a chosen id.
func (s *Service) appendRequest(req *wire.InvocationRequest, ev wire.Event) (*eventlog.Pending, error) {
	if wire.Chosen(req.InvocationID, ev.ID) {
		return s.cfg.Log.AppendAsync(wire.RequestSubject(req.Key), ev)
	}
	return s.cfg.Log.AppendAsync(wire.RequestSubject(req.Key), ev, eventlog.Packed())
}

// Await waits for the receipt of invocation inv, whoever made the call and
// whichever node runs it: the receipt the projection holds, else the one that
// lands before ctx ends (then an error matching ErrPending, with the id in a
// partial receipt). A call the watcher held has no receipt until the owner
// decides: Await waits on through the decision and the approved call's run.
func (s *Service) Await(ctx context.Context, inv string) (wire.Receipt, error) {
	req := wire.InvocationRequest{InvocationID: inv}
	for {
		ch := s.waiters.add(inv)
		if rc, ok := s.receiptRead(ctx, inv); ok {
			s.waiters.remove(inv, ch)
			return rc, nil
		}
		rc, err := s.await(ctx, 0, &req, ch, nil, nil)
		if err != nil || rc.Status != wire.StatusPendingApproval { // held: not an outcome yet
			return rc, err
		}
	}
}

// receiptRead is the receipt of inv that this node's projector has read by
// now, if any: the one the projection holds, or, when its batch is still to
// commit, the one it holds once the batch has (a receipt read before a waiter
// was added woke no one, and is in that batch). The wait is the projection
// wait (Settings.Wait) at most.
func (s *Service) receiptRead(ctx context.Context, inv string) (wire.Receipt, bool) {
	if rc, _, err := s.cfg.Projector.Receipt(inv); err == nil {
		return rc, true
	}
	read := s.cfg.Projector.Read(wire.DataStream)
	if s.cfg.Projector.Applied(wire.DataStream) >= read {
		return wire.Receipt{}, false
	}
	wctx, cancel := s.cfg.Projector.WaitContext(ctx)
	err := s.cfg.Projector.WaitFor(wctx, wire.DataStream, read)
	cancel()
	if err != nil {
		return wire.Receipt{}, false
	}
	rc, _, err := s.cfg.Projector.Receipt(inv)
	return rc, err == nil
}

// CheckRow is the failure every call of row will have on this node's runners
// (runner.Runners.Check), or nil: for the write path to warn of a row that
// cannot run as written.
func (s *Service) CheckRow(row *contract.Row) error { return s.cfg.Runners.Check(row) }

// checkInvoke checks what Invoke and InvokeOnce check before anything is
// appended (the payload ceiling, the key), and records the directory position.
func (s *Service) checkInvoke(req *wire.InvocationRequest) error {
	if n := len(req.Body) + len(req.Args); n > s.cfg.MaxPayload { // Args: the arguments object, if any
		return fmt.Errorf("%w: the body is %d bytes; the ceiling is %d", ErrPayloadTooLarge, n, s.cfg.MaxPayload)
	}
	if enc := jsonLen(req.Body) + len(req.Args); enc > s.receiptBudget {
		// The request event carries the body JSON-encoded, where '<' or a control
		// character is six bytes: it must fit in one event too.
		return fmt.Errorf("%w: the body is %d bytes, %d once JSON-encoded; the log takes %d in one event", ErrPayloadTooLarge, len(req.Body), enc, s.receiptBudget)
	}
	if err := contract.ValidateKey(req.Key); err != nil {
		return err
	}
	req.DirSeq = s.cfg.Projector.Applied(wire.ControlStream)
	return nil
}

func pendingReceipt(req *wire.InvocationRequest) wire.Receipt {
	return wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: req.InvocationID, Trace: req.Trace, Key: req.Key}}
}

// await waits on ch, registered for req's invocation, for the receipt, until ctx
// ends or, when wait is not 0, wait has passed; f is the request's append, whose
// failure ends the wait (nil: nothing was appended, the request is in the log
// already). When the append's connection was lost before its acknowledgement,
// the request's event again (nil: none to send) is appended once more, and the
// wait goes on with its future; the log's duplicate detection (the event id is
// its Nats-Msg-Id) keeps it to one copy inside the duplicate window. A wait
// that ends without a receipt hands out the invocation id only when the log
// holds the request (else ErrNotAppended).
func (s *Service) await(ctx context.Context, wait time.Duration, req *wire.InvocationRequest, ch chan wire.Receipt, f *eventlog.Pending, again *wire.Event) (wire.Receipt, error) {
	// The request's acknowledgement is not waited for on its own: the receipt
	// implies it, and waking for it would cost every call a hand-off. It is read
	// only when the wait ends otherwise (stored reports it then).
	var failed, full <-chan struct{}
	if f != nil {
		failed, full = f.Failed(), s.cfg.Log.Full()
	}
	var deadline <-chan time.Time
	if wait > 0 {
		t := startTimer(wait)
		defer stopTimer(t)
		deadline = t.C
	}
	acked := f == nil // the request is in the log (known, or nothing to wait for)
	// ch is this wait's alone when it appended the request (add made ch for
	// it): handed back once it has brought the receipt.
	own := f != nil
	stored := func() bool {
		if !acked {
			select {
			case <-f.Stored():
				acked = true
			default:
			}
		}
		return acked
	}
	for {
		var cause error
		select {
		case rc := <-ch:
			if own {
				s.waiters.recycle(ch)
			}
			return rc, nil
		case <-full: // the server answers no append that found its disk full
			if stored() { // only its receipt ends the wait now
				full = nil
				continue
			}
			s.waiters.remove(req.InvocationID, ch)
			return pendingReceipt(req), s.cfg.Log.FullError()
		case <-failed:
			err, lost := appendFailed(f.Err())
			if lost {
				// The acknowledgement is lost, not the request: it may be stored
				// and run. Its receipt, if any, still ends the wait.
				failed, f = nil, nil
				continue
			}
			if errors.Is(err, eventlog.ErrConnectionLost) && again != nil {
				s.cfg.Logger.Info("dispatcher: request appended again after its connection to the log was lost", "invocation", req.InvocationID)
				if f, err = s.cfg.Log.AppendAsync(wire.RequestSubject(req.Key), *again); err == nil {
					failed = f.Failed()
					continue
				}
			}
			s.waiters.remove(req.InvocationID, ch)
			return pendingReceipt(req), err
		case <-ctx.Done():
			cause = ctx.Err()
		case <-deadline:
			cause = context.DeadlineExceeded
		}
		s.waiters.remove(req.InvocationID, ch)
		// The receipt may have landed between the wakeup and the cancel.
		if rc, _, err := s.cfg.Projector.Receipt(req.InvocationID); err == nil {
			return rc, nil
		}
		if !stored() && !s.inLog(req.InvocationID, f) {
			return wire.Receipt{}, ErrNotAppended
		}
		return pendingReceipt(req), fmt.Errorf("%w: %w", ErrPending, cause)
	}
}

// waitTimers are the timers of awaits bounded by a wait, kept for the next:
// a timer stopped (Stop) delivers nothing stale after, and Reset starts it
// afresh.
var waitTimers sync.Pool

// startTimer is a timer that fires once d has passed.
func startTimer(d time.Duration) *time.Timer {
	if t, ok := waitTimers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// stopTimer stops t and keeps it for startTimer.
func stopTimer(t *time.Timer) {
	t.Stop()
	waitTimers.Put(t)
}

// inLog reports whether the log holds the request of invocation inv, whose
// append's acknowledgement has not arrived (f: the append, nil once its
// acknowledgement is lost). It waits for the acknowledgement at most
// receiptAckWait; when it is lost (an ack timeout), it asks the projection,
// caught up with the log. A log that cannot be asked counts as not holding it:
// an id is handed out only for a request known to be stored.
func (s *Service) inLog(inv string, f *eventlog.Pending) bool {
	if f != nil {
		t := time.NewTimer(receiptAckWait)
		defer t.Stop()
		select {
		case <-f.Stored():
			return true
		case <-f.Failed():
			if _, lost := appendFailed(f.Err()); !lost {
				return false // refused: not stored
			}
		case <-t.C:
		}
	}
	ctx, cancel := s.cfg.Projector.WaitContext(context.Background())
	defer cancel()
	if err := s.cfg.Projector.Settle(ctx, wire.DataStream); err != nil {
		return false
	}
	_, err := s.cfg.Projector.FirstRequest(inv)
	return err == nil
}

// appendFailed reads the failure an async append reported (Pending.Failed),
// for every wait on an append (await, inLog, callStored): the error classified,
// and whether only the acknowledgement is lost (ErrAckTimeout), when the request
// may be stored and its receipt may come.
func appendFailed(err error) (classified error, lost bool) {
	err = eventlog.AppendError(err)
	return err, errors.Is(err, eventlog.ErrAckTimeout)
}
