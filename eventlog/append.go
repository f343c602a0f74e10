package eventlog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NewEvent builds an envelope with a fresh ULID, stamped by the log's clock.
func (l *Log) NewEvent(typ, actor string, data any) (wire.Event, error) {
	return wire.NewEvent(l.cfg.Clock(), typ, actor, data)
}

// AppendOption adjusts one append (Packed, WithoutDedupe,
// ExpectLastSubjectSeq). It is a value, so that applying options allocates
// nothing.
type AppendOption struct{ o appendOpts }

// appendOpts are an append's options; an AppendOption sets some of them.
type appendOpts struct {
	expect    bool   // ExpectLastSubjectSeq: expectSeq is set
	expectSeq uint64 // the last subject sequence expected, when expect
	noMsgID   bool
	packed    bool
}

// packable says an async append with these options may go in a pack.
func (o appendOpts) packable() bool { return o.packed && !o.expect }

// Packed lets an async append share one message of the log with others made at
// about the same time (a pack: see pack.go and packer.go), when the log packs
// (Config.Pack) and the append is of a kind packs carry (wire.PackSubject):
// capdir's own requests and receipts. Every reader sees the event on its own
// subject, as if appended alone; the stream's duplicate detection knows the
// pack's id, not the event's, so a caller must not append the same event again
// in another append while a copy may be stored: mark an append Packed only when
// nothing else can append its event (a request under an invocation id just
// minted, the receipt of a call no other worker can be running). Its Pending
// is answered with the pack's sequence; one that gets no answer is sent again
// by the log itself (see packer) and fails only after half the duplicate
// window, with ErrAckTimeout.
func Packed() AppendOption { return AppendOption{appendOpts{packed: true}} }

// WithoutDedupe appends without the event id as Nats-Msg-Id, so the log does not
// remember it for duplicate detection. For events appended exactly once, whose
// duplicates nothing could produce: it spares the header's encoding, the log's
// bookkeeping and every reader's header parsing. Such an append is never sent
// again (an append that got no answer may be stored), so a failover refuses it
// where it would have resent one with its id.
func WithoutDedupe() AppendOption { return AppendOption{appendOpts{noMsgID: true}} }

// ExpectLastSubjectSeq makes the append succeed only if the last message on its
// subject has this sequence (0: the subject has no message yet). Otherwise Append
// returns an error matching ErrConflict.
func ExpectLastSubjectSeq(seq uint64) AppendOption {
	return AppendOption{appendOpts{expect: true, expectSeq: seq}}
}

// Append writes ev to subject and returns its stream sequence once JetStream has
// stored it. A retry with the same event id inside the duplicate window returns the
// sequence of the first copy and stores nothing new.
func (l *Log) Append(ctx context.Context, subject string, ev wire.Event, opts ...AppendOption) (uint64, error) {
	msg, popts, err := l.prepare(subject, ev, opts)
	if err != nil {
		return 0, err
	}
	if l.disk != nil {
		// The server answers nothing to an append that finds the disk full: stop
		// waiting once its store says so.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(l.disk.state.Load().filled, func() { cancel(ErrDiskFull) })
		defer stop()
	}
	ack, err := l.publish(ctx, msg, popts)
	if err != nil && isConflict(err) {
		if seq, ok := l.storedCopy(ctx, msg); ok {
			l.cfg.Metrics.countAppend(ev.Type, nil)
			return seq, nil
		}
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrDiskFull) {
			err = l.disk.refusalOnceFilled()
		} else {
			err = classify(err)
		}
		l.cfg.Metrics.countAppend(ev.Type, err)
		return 0, err
	}
	l.cfg.Metrics.countAppend(ev.Type, nil)
	return ack.Sequence, nil
}

// publish sends msg and waits for its acknowledgement. An append the log's
// duplicate detection knows (it carries its event id as Nats-Msg-Id) that gets no
// answer within attemptWait (the server that took it went away, or the stream
// has no leader yet) is sent again, the same, until Config.ElectionWait has
// passed: a copy that was stored is answered with the first's sequence.
func (l *Log) publish(ctx context.Context, msg *nats.Msg, popts []jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if msg.Header.Get(nats.MsgIdHdr) == "" { // WithoutDedupe: sent once
		return l.js.PublishMsg(ctx, msg, popts...)
	}
	until := time.Now().Add(l.cfg.ElectionWait)
	for {
		actx, cancel := context.WithTimeout(ctx, attemptWait)
		ack, err := l.js.PublishMsg(actx, msg, popts...)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) {
			return ack, err
		}
		if time.Now().After(until) {
			return nil, fmt.Errorf("%w: the append got no answer within %s (%v); it may be stored: read before writing it again", ErrElecting, l.cfg.ElectionWait, err)
		}
	}
}

// storedCopy is the sequence of msg's first copy when the last message on its
// subject is that copy: an append sent again (by publish, its answer lost, or by
// its caller) that expects the subject's last sequence is refused by that check
// before the log's duplicate detection sees it, since its own first copy moved
// the sequence on. ok is false when the last message is another's, or none.
func (l *Log) storedCopy(ctx context.Context, msg *nats.Msg) (seq uint64, ok bool) {
	id := msg.Header.Get(nats.MsgIdHdr)
	if id == "" {
		return 0, false
	}
	for _, name := range wire.Streams {
		s, found := l.streams[name]
		if !found {
			continue
		}
		m, err := s.GetLastMsgForSubject(ctx, msg.Subject)
		if err == nil && m.Header.Get(nats.MsgIdHdr) == id {
			return m.Sequence, true
		}
	}
	return 0, false
}

// attemptWait bounds one attempt of an append the log's duplicate detection
// knows: much longer than a stored append's answer takes.
const attemptWait = 2 * time.Second

// unanswered reports whether an attempt's err says only that no answer came.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// AppendAsync writes ev without waiting; the returned Pending resolves to the
// stream's acknowledgement. Use it where many appends are in flight at once.
func (l *Log) AppendAsync(subject string, ev wire.Event, opts ...AppendOption) (*Pending, error) {
	msg, o, err := l.encode(subject, ev, opts)
	if err != nil {
		return nil, err
	}
	p := &Pending{msg: msg}
	if !o.noMsgID {
		p.msgID = ev.ID
	}
	if !o.packable() {
		// One a pack may carry gets its header only if it is sent alone: in a
		// pack, the pack's id stands for it.
		p.withMsgID()
	}
	expect(&p.msg, o)
	if err := l.pl.submit(p, !o.expect && isDataSubject(subject), o.packable()); err != nil {
		err = classify(err)
		l.cfg.Metrics.countAppend(ev.Type, err)
		return nil, err
	}
	l.cfg.Metrics.countAppend(ev.Type, nil)
	return p, nil
}

// Notify publishes the event an async append carried on subject as a plain NATS
// message: not stored, delivered to whoever subscribes at that moment. Call it once
// the append is acknowledged, to announce what is now in the log.
func (l *Log) Notify(subject string, appended *Pending) error {
	return l.nc.Publish(subject, appended.msg.Data)
}

// NotifyEvent publishes ev on subject as a plain NATS message, as Notify does, for
// an event already in the log (a receipt announced again) or never stored (a
// refusal told to a bus client).
func (l *Log) NotifyEvent(subject string, ev wire.Event) error {
	data, err := wire.Encode(&ev)
	if err != nil {
		return err
	}
	return l.nc.Publish(subject, data)
}

// AwaitAck waits for an async append's acknowledgement.
func AwaitAck(ctx context.Context, p *Pending) (uint64, error) {
	return awaitAck(ctx, p, nil)
}

// ErrAckTimeout is returned by AwaitAckWithin when the acknowledgement is late, and
// by an AppendAsync's Pending whose acknowledgement has not come within
// Config.AckTimeout: the event may or may not be stored.
var ErrAckTimeout = errors.New("eventlog: append not acknowledged in time")

// AwaitAckWithin is AwaitAck bounded by d as well as ctx, without deriving a
// context (for a caller that appends on every request).
func AwaitAckWithin(ctx context.Context, p *Pending, d time.Duration) (uint64, error) {
	if p.ackTimeout > 0 && p.ackTimeout <= d && !p.grouped {
		// The append fails with ErrAckTimeout first (Config.AckTimeout): no timer.
		return awaitAck(ctx, p, nil)
	}
	if seq, err, ok, _ := p.outcome(); ok { // no timer for an answer in already
		return awaitOutcome(seq, err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	return awaitAck(ctx, p, t.C)
}

func awaitAck(ctx context.Context, p *Pending, late <-chan time.Time) (uint64, error) {
	seq, err, ok, done := p.outcome()
	if !ok {
		select {
		case <-done:
			seq, err, _, _ = p.outcome()
		case <-late:
			return 0, ErrAckTimeout
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return awaitOutcome(seq, err)
}

func awaitOutcome(seq uint64, err error) (uint64, error) {
	if err != nil {
		return 0, classify(err)
	}
	return seq, nil
}

// encode is ev's message to subject, without headers, and the options applied:
// its caller gives it its Nats-Msg-Id header (msgIDHeader) unless they say
// otherwise.
func (l *Log) encode(subject string, ev wire.Event, opts []AppendOption) (nats.Msg, appendOpts, error) {
	select {
	case <-l.closed:
		return nats.Msg{}, appendOpts{}, ErrClosed
	default:
	}
	if err := l.disk.refusal(); err != nil {
		return nats.Msg{}, appendOpts{}, err
	}
	o := applyAppendOpts(opts)
	if ev.ID == "" || ev.Type == "" {
		return nats.Msg{}, o, fmt.Errorf("%w: an event needs an id and a type", wire.ErrBadEvent)
	}
	body, err := wire.Encode(&ev)
	if err != nil {
		return nats.Msg{}, o, fmt.Errorf("eventlog: encode event: %w", err)
	}
	return nats.Msg{Subject: subject, Data: body}, o, nil
}

// msgIDHeader is the header jetstream.WithMsgID would set for id, without its
// option's closure and the per-append option slice.
func msgIDHeader(id string) nats.Header { return nats.Header{jetstream.MsgIDHeader: []string{id}} }

func (l *Log) prepare(subject string, ev wire.Event, opts []AppendOption) (*nats.Msg, []jetstream.PublishOpt, error) {
	msg, o, err := l.encode(subject, ev, opts)
	if err != nil {
		return nil, nil, err
	}
	if !o.noMsgID {
		msg.Header = msgIDHeader(ev.ID)
	}
	expect(&msg, o)
	return &msg, l.retry, nil
}

// expect sets msg's expected-last-subject-sequence header when o asks for one
// (ExpectLastSubjectSeq), as Append and AppendAsync both send it.
func expect(msg *nats.Msg, o appendOpts) {
	if !o.expect {
		return
	}
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	msg.Header[jetstream.ExpectedLastSubjSeqHeader] = []string{strconv.FormatUint(o.expectSeq, 10)}
}

// applyAppendOpts is opts together, later ones adding to earlier ones.
func applyAppendOpts(opts []AppendOption) appendOpts {
	var o appendOpts
	for _, opt := range opts {
		a := opt.o
		o.noMsgID = o.noMsgID || a.noMsgID
		o.packed = o.packed || a.packed
		if a.expect {
			o.expect, o.expectSeq = true, a.expectSeq
		}
	}
	return o
}

// electionRetryWait is the pause before an append no server answered for is sent
// again (Config.ElectionWait bounds how long it is).
const electionRetryWait = 250 * time.Millisecond

// AppendError is the error an append returns for err, an error from an async
// append's future: a rejected ExpectLastSubjectSeq matches ErrConflict.
func AppendError(err error) error { return classify(err) }

func classify(err error) error {
	if isConflict(err) {
		return fmt.Errorf("%w (%v)", ErrConflict, err)
	}
	if errors.Is(err, jetstream.ErrAsyncPublishTimeout) { // Config.AckTimeout
		return fmt.Errorf("%w (%v)", ErrAckTimeout, err)
	}
	if errors.Is(err, nats.ErrDisconnected) {
		return fmt.Errorf("%w: it may or may not be stored (%v)", ErrConnectionLost, err)
	}
	if errors.Is(err, jetstream.ErrNoStreamResponse) { // sent again for Config.ElectionWait
		return fmt.Errorf("%w: no server answered for the stream while it was sent again (%v); nothing was stored: send it again in a few seconds", ErrElecting, err)
	}
	if errors.Is(err, ErrBatchUnmatched) { // says all it has to
		return err
	}
	if isOutOfStorage(err) {
		return fmt.Errorf("%w: the log's servers refuse appends for lack of storage (%v); free space on their disks or raise their JetStream storage limit; nothing was stored", ErrDiskFull, err)
	}
	return fmt.Errorf("eventlog: append: %w", err)
}

// The JetStream error codes of a server out of storage: insufficient resources
// (its store reached the limit it set itself from the disk's size), and
// insufficient storage resources.
const (
	jsInsufficientResources    = 10023
	jsStorageResourcesExceeded = 10047
)

func isOutOfStorage(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jsInsufficientResources || apiErr.ErrorCode == jsStorageResourcesExceeded)
}

func isConflict(err error) bool {
	if errors.Is(err, ErrConflict) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
