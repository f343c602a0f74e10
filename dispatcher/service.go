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
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/suggest"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go/jetstream"
)

// ConsumerName is the durable pull consumer every worker on every node shares.
const ConsumerName = "capdir-dispatch"

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
	// Workers is how many invocations this process runs at once (default 16 per CPU).
	Workers int
	// AckWait is how long a worker may hold a request before it is redelivered.
	AckWait time.Duration
	// MaxDeliver bounds redeliveries of one request (default 5).
	MaxDeliver int
	// RunTimeout bounds one runner call (default 60s).
	RunTimeout time.Duration
	// MaxPayload is the payload ceiling on a request body (default 1 MiB, and never
	// more than the log accepts in one event).
	MaxPayload int
	// ResultCap bounds the result stored on a receipt (default 1 MiB). A receipt
	// must also fit in one event: see receiptBudget.
	ResultCap int
	// Suggestions is how many did_you_mean keys an unknown key gets (default 5).
	Suggestions int
	// Name identifies this node's workers on receipts (default the hostname).
	Name   string
	Clock  func() time.Time
	Logger *slog.Logger
	// Metrics counts receipts (see NewMetrics); a private, unregistered set when nil.
	Metrics *Metrics

	// beforeReceipt, when set, runs after the runner and before the receipt is
	// appended; returning an error abandons the request unacknowledged, as a
	// crash there would (tests).
	beforeReceipt func(req *eventlog.InvocationRequest) error
	// beforeAck, when set, runs after the receipt is appended and before the request
	// is acknowledged; returning an error abandons the ack (tests).
	beforeAck func(req *eventlog.InvocationRequest) error
}

func (c *ServiceConfig) setDefaults() {
	if c.Env == nil {
		c.Env = os.LookupEnv
	}
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
	if c.Workers < 1 {
		errs = append(errs, errors.New("dispatcher: workers must be at least 1"))
	}
	if c.MaxDeliver < 1 {
		errs = append(errs, errors.New("dispatcher: max deliver must be at least 1"))
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
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
// receipt. Start it once; Stop is idempotent.
type Service struct {
	cfg           ServiceConfig
	receiptBudget int // bytes a receipt may spend on body and result
	waiters       *waiters
	suggest       *suggest.Suggester
	gate          *gate.Gate

	mu       sync.Mutex
	cc       jetstream.ConsumeContext
	work     chan jetstream.Msg
	wg       sync.WaitGroup
	cancel   context.CancelFunc
	stopOnce sync.Once
	closed   chan struct{}
}

// NewService wires a service to its projector (receipt waiters and the did_you_mean
// index). Call it before the projector's Run.
func NewService(cfg ServiceConfig) (*Service, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A request and a receipt are one event each: a body, and a receipt's body and
	// result together, must fit in what the log accepts.
	fit := cfg.Log.MaxPayload() - envelopeReserve
	cfg.MaxPayload = min(cfg.MaxPayload, fit)
	s := &Service{cfg: cfg, receiptBudget: fit, waiters: newWaiters(), suggest: suggest.New(), closed: make(chan struct{})}
	g, err := gate.New(gate.Config{
		MaxPayload: cfg.MaxPayload, Breaker: cfg.Breaker, Env: cfg.Env, TagSalt: cfg.TagSalt, Clock: cfg.Clock,
		Suggest: func(key string) []string { return s.suggest.Suggest(key, cfg.Suggestions) },
	})
	if err != nil {
		return nil, err
	}
	s.gate = g
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
	cons, err := s.cfg.Log.JetStream().CreateOrUpdateConsumer(ctx, eventlog.DataStream, jetstream.ConsumerConfig{
		Durable:        ConsumerName,
		FilterSubjects: wire.AllRequestSubjects, // capdir's own requests and the bus clients'
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        s.cfg.AckWait,
		MaxDeliver:     s.cfg.MaxDeliver,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		MaxAckPending:  64 * 1024,
	})
	if err != nil {
		return fmt.Errorf("dispatcher: consumer: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	// A delivered request waits here for a free worker; the buffer spares the
	// consumer's callback a hand-off per request.
	s.work = make(chan jetstream.Msg, s.cfg.Workers)
	held := make([]heldSlot, s.cfg.Workers)
	for i := range held {
		s.wg.Add(1)
		go func(slot *heldSlot) {
			defer s.wg.Done()
			// Each worker's calls derive from its own context: contexts derived
			// from one shared parent contend on its list of children.
			wctx, wcancel := context.WithCancel(runCtx)
			defer wcancel()
			for m := range s.work {
				if wctx.Err() != nil {
					continue // stopping: left unacknowledged, so it is redelivered
				}
				slot.hold(m)
				s.handle(wctx, m)
				slot.hold(nil)
			}
		}(&held[i])
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		keepInProgress(runCtx, held, s.cfg.AckWait/3)
	}()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case s.work <- m:
		case <-runCtx.Done():
		}
	}, jetstream.PullMaxMessages(2*s.cfg.Workers))
	if err != nil {
		cancel()
		close(s.work)
		s.wg.Wait()
		return fmt.Errorf("dispatcher: consume: %w", err)
	}
	s.mu.Lock()
	s.cc = cc
	s.mu.Unlock()
	return nil
}

// Stop stops taking requests, cancels the runs in flight (their requests are not
// acknowledged and will be redelivered) and waits for the workers.
func (s *Service) Stop() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		cc := s.cc
		s.mu.Unlock()
		if cc != nil {
			cc.Drain()
			<-cc.Closed()
		}
		if s.cancel != nil {
			s.cancel()
		}
		if s.work != nil {
			close(s.work)
		}
		s.wg.Wait()
		close(s.closed)
	})
}

// Closed is closed once Stop has finished.
func (s *Service) Closed() <-chan struct{} { return s.closed }

// ErrPayloadTooLarge is returned by Invoke for a body over the payload ceiling;
// nothing is appended.
var ErrPayloadTooLarge = errors.New("payload_too_large")

// envelopeReserve is what an event needs beside its body or result: the envelope,
// ids, fingerprints, timings and a shape preview.
const envelopeReserve = 64 << 10

// ErrPending is returned by Invoke when ctx ended before the receipt arrived; the
// returned receipt carries the invocation id and trace to look up later.
var ErrPending = errors.New("dispatcher: receipt pending")

// Invoke appends an invocation request and waits for its receipt to be in the log.
// req.Key and req.Body are required; InvocationID and Trace are minted when empty.
// When ctx ends first, it returns the ids in a partial receipt and an error
// matching ErrPending. The projection may fold the receipt a moment after Invoke
// returns: Projector.Settle waits for it.
func (s *Service) Invoke(ctx context.Context, req eventlog.InvocationRequest) (eventlog.Receipt, error) {
	if len(req.Body) > s.cfg.MaxPayload {
		return eventlog.Receipt{}, fmt.Errorf("%w: the body is %d bytes; the ceiling is %d", ErrPayloadTooLarge, len(req.Body), s.cfg.MaxPayload)
	}
	if err := contract.ValidateKey(req.Key); err != nil {
		return eventlog.Receipt{}, err
	}
	req.DirSeq = s.cfg.Projector.Applied(eventlog.ControlStream)
	ev, err := wire.PrepareRequest(s.cfg.Clock(), &req)
	if err != nil {
		return eventlog.Receipt{}, err
	}
	pending := eventlog.Receipt{ReceiptSummary: eventlog.ReceiptSummary{InvocationID: req.InvocationID, Trace: req.Trace, Key: req.Key}}
	ch := s.waiters.add(req.InvocationID)
	// The receipt implies the request was stored, so the append's acknowledgement
	// is not awaited on its own: only its failure ends the wait early.
	f, err := s.cfg.Log.AppendAsync(eventlog.RequestSubject(req.Key), ev, eventlog.WithoutDedupe())
	if err != nil {
		s.waiters.remove(req.InvocationID)
		return pending, err
	}
	select {
	case rc := <-ch:
		return rc, nil
	case err := <-f.Err():
		s.waiters.remove(req.InvocationID)
		return pending, eventlog.AppendError(err)
	case <-ctx.Done():
		s.waiters.remove(req.InvocationID)
		// The receipt may have landed between the wakeup and the cancel.
		if rc, _, err := s.cfg.Projector.Receipt(req.InvocationID); err == nil {
			return rc, nil
		}
		return pending, fmt.Errorf("%w: %w", ErrPending, ctx.Err())
	}
}
