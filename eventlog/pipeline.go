package eventlog

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pipeline sends the log's async appends and reads their acknowledgements, in
// place of JetStream's publish futures: every append goes out with a reply
// subject under one inbox of the log's own (prefix + a counter), the server's
// answers come in on one subscription to it, whose handler parses each
// acknowledgement by hand and completes the append waiting under its id. What
// an append costs is its Pending and its reply subject; an acknowledgement
// costs nothing past the message the connection delivers. One timer serves
// every append's Config.AckTimeout: it fires at the earliest deadline of the
// appends in flight, fails those whose deadline has come, and is set again for
// the earliest of the rest.
//
// What is refused or lost is told as JetStream's futures told it (the same
// error values, read by classify): a rejected append's API error, no stream
// answering (sent again every retryWait, at most retries times, then
// jetstream.ErrNoStreamResponse), no acknowledgement within the timeout
// (jetstream.ErrAsyncPublishTimeout), the connection lost
// (nats.ErrDisconnected), too many in flight (jetstream.ErrTooManyStalledMsgs).
type pipeline struct {
	nc         *nats.Conn
	prefix     string // the inbox, ending in '.': an append's reply subject is prefix + its id
	sub        *nats.Subscription
	ackTimeout time.Duration // Config.AckTimeout
	retryWait  time.Duration // between the sends of an append no stream answered
	retries    int           // how many times such an append is sent again
	next       atomic.Uint64 // the last id given
	// maxPayload is the connected server's largest message, as nc.MaxPayload
	// says after each connect: read without nc's lock, which its flusher holds
	// while it writes (on the embedded server's in-process pipe, until the server
	// has read it), so that a packer deciding where an append goes does not wait
	// on it with pl.mu held.
	maxPayload atomic.Int64

	mu       sync.Mutex
	inflight map[uint64]*Pending
	timer    *time.Timer // runs sweep; set while armed
	armed    bool
	stall    chan struct{} // closed once inflight is below maxInflight again
	idle     chan struct{} // closed once inflight is empty and nothing settles
	// settling counts the batches out of flight whose appends are still being
	// completed, or registered again one by one (group commit's sendAlone): the
	// log is not idle while they are.
	settling int

	group groupCommit // the appends sent together (groupcommit.go)
	packs packers     // the appends packed in one message (packer.go)
	hooks pipelineHooks
}

// maxInflight bounds the appends awaiting acknowledgement, as
// jetstream.WithPublishAsyncMaxPending did; an append beyond it waits up to
// stallWait for a slot.
const (
	maxInflight = 4096
	stallWait   = 200 * time.Millisecond
)

// newPipeline subscribes to a fresh inbox on nc and watches nc for a lost
// connection, which fails every append in flight.
func newPipeline(nc *nats.Conn, ackTimeout, retryWait time.Duration, retries int) (*pipeline, error) {
	pl := &pipeline{nc: nc, prefix: nc.NewInbox() + ".", ackTimeout: ackTimeout, retryWait: retryWait, retries: retries,
		inflight: make(map[uint64]*Pending, 64)}
	pl.timer = time.AfterFunc(time.Hour, pl.sweep)
	pl.timer.Stop()
	sub, err := nc.Subscribe(pl.prefix+"*", pl.acknowledged)
	if err != nil {
		return nil, err
	}
	pl.sub = sub
	go pl.watch(nc.StatusChanged(nats.RECONNECTING, nats.CLOSED))
	connected := nc.StatusChanged(nats.CONNECTED, nats.CLOSED)
	pl.maxPayload.Store(nc.MaxPayload())
	go pl.followMaxPayload(connected)
	return pl, nil
}

// followMaxPayload keeps maxPayload the server's after each reconnect, until the
// connection closes.
func (pl *pipeline) followMaxPayload(status <-chan nats.Status) {
	for s := range status {
		if s == nats.CLOSED {
			return
		}
		pl.maxPayload.Store(pl.nc.MaxPayload())
	}
}

// Pending is an append on its way to the stream, AppendAsync's answer: AwaitAck
// and AwaitAckWithin wait for its sequence, Notify announces it once stored.
type Pending struct {
	pl         *pipeline
	msg        nats.Msg      // as sent (and sent again while no stream answers)
	ackTimeout time.Duration // Config.AckTimeout: when it fails unanswered

	// members are the appends of a batch (group commit), when this is one: its
	// msg is the batch's commit's reply subject only.
	members []*Pending
	// grouped says the append waited to go out in a batch (group commit) or a
	// pack: its Config.AckTimeout starts only when the batch is sent, so a
	// caller's own bound (AwaitAckWithin) is kept with a timer of its own.
	grouped bool
	// packed says this is a pack (packer.go): its msg is the pack, members its
	// appends. unsure says a send of it got no answer (it may be stored), and
	// keepUntil is when it stops being sent again.
	packed    bool
	unsure    bool
	keepUntil time.Time
	// leads is the packer this append or pack leads, while it does.
	leads *packer
	// msgID is the event id of an append a pack may carry, whose msg gets its
	// Nats-Msg-Id header only when it is sent alone (withMsgID): in a pack the
	// pack's id stands for it, and the header would be made for nothing.
	msgID string

	// Under pl.mu, while in flight:
	id       uint64
	deadline time.Time // zero while it waits to be sent again
	retries  int

	mu     sync.Mutex
	state  pendingState
	ack    Ack
	err    error
	okCh   chan *Ack     // made by Stored
	failCh chan struct{} // made by Failed, closed once failed
	done   chan struct{} // made by a wait, closed once resolved
}

type pendingState uint8

const (
	inFlight pendingState = iota
	acked
	failed
)

// send registers p under a new id and publishes it.
func (pl *pipeline) send(p *Pending) error {
	_, err := pl.sendSettling(p, false)
	return err
}

// sendSettling is send; with settle, it also ends a batch's settling (settled)
// in the moment p goes into flight, so that the log is never idle, nor busy,
// between the two. It reports whether it ended it: not when p never went into
// flight (no slot came within stallWait).
func (pl *pipeline) sendSettling(p *Pending, settle bool) (bool, error) {
	p.withMsgID()
	id := pl.next.Add(1)
	var b [64]byte
	p.msg.Reply = string(strconv.AppendUint(append(b[:0], pl.prefix...), id, 36))
	p.id = id
	if p.pl == nil { // an append sent again (a batch refused whole) keeps what its caller reads
		p.pl, p.ackTimeout = pl, pl.ackTimeout
	}
	pl.mu.Lock()
	if len(pl.inflight) >= maxInflight {
		var t *time.Timer
		for len(pl.inflight) >= maxInflight {
			if pl.stall == nil {
				pl.stall = make(chan struct{})
			}
			stall := pl.stall
			pl.mu.Unlock()
			if t == nil {
				t = time.NewTimer(stallWait)
				defer t.Stop()
			}
			select {
			case <-stall:
			case <-t.C:
				return false, jetstream.ErrTooManyStalledMsgs
			}
			pl.mu.Lock()
		}
	}
	pl.inflight[id] = p
	pl.startLocked(p)
	if settle {
		pl.settling-- // p is in flight: the log is not idle
	}
	pl.mu.Unlock()
	if err := pl.nc.PublishMsg(&p.msg); err != nil {
		pl.failInFlight(p, err)
		return settle, err
	}
	return settle, nil
}

// startLocked sets p's deadline, and the timer when none is set: every other
// append in flight has a deadline no later than p's (the same timeout, from an
// earlier time), so a timer set is set early enough.
func (pl *pipeline) startLocked(p *Pending) {
	if pl.ackTimeout <= 0 {
		return
	}
	p.deadline = time.Now().Add(pl.ackTimeout)
	if !pl.armed {
		pl.armed = true
		pl.timer.Reset(pl.ackTimeout)
	}
}

// removeLocked takes p out of flight, if it is there, and reports whether it
// was.
func (pl *pipeline) removeLocked(p *Pending) bool {
	if pl.inflight[p.id] != p {
		return false
	}
	delete(pl.inflight, p.id)
	if p == pl.group.leader {
		pl.handoffLocked()
	}
	if p.leads != nil && p.leads.leader == p {
		pl.handoffPackLocked(p.leads)
	}
	if pl.stall != nil && len(pl.inflight) < maxInflight {
		close(pl.stall)
		pl.stall = nil
	}
	pl.idleLocked()
	return true
}

// idleLocked closes the idle channel once no append is in flight or settling.
func (pl *pipeline) idleLocked() {
	if pl.idle != nil && len(pl.inflight) == 0 && pl.settling == 0 {
		close(pl.idle)
		pl.idle = nil
	}
}

// settled ends the settling of a batch out of flight (pipeline.settling).
func (pl *pipeline) settled() {
	pl.mu.Lock()
	pl.settling--
	pl.idleLocked()
	pl.mu.Unlock()
}

// acknowledged is the inbox's handler: the server's answer to the append its
// subject names.
func (pl *pipeline) acknowledged(m *nats.Msg) {
	if len(m.Subject) <= len(pl.prefix) {
		return
	}
	id, err := strconv.ParseUint(m.Subject[len(pl.prefix):], 36, 64)
	if err != nil {
		return
	}
	pl.mu.Lock()
	p := pl.inflight[id]
	if p == nil { // timed out, or failed with the connection
		pl.mu.Unlock()
		return
	}
	if h := pl.hooks.dropPackAck.Load(); p.packed && h != nil && (*h)() {
		pl.mu.Unlock()
		return
	}
	noStream := len(m.Data) == 0 && m.Header.Get("Status") == "503" // no stream answered: no leader yet
	if p.members != nil && !(p.packed && noStream) {
		pl.settling++ // until its appends are completed or in flight again
		pl.removeLocked(p)
		pl.mu.Unlock()
		if p.packed {
			pl.packAcknowledged(p, m)
		} else {
			pl.batchAcknowledged(p, m)
		}
		return
	}
	if noStream {
		if p.retries < pl.retries || p.packed && time.Now().Before(p.keepUntil) {
			p.retries++
			p.deadline = time.Time{} // the timeout starts again with the next send
			if p == pl.group.leader {
				pl.handoffLocked() // the appends waiting for it go on without it
			}
			if p.leads != nil && p.leads.leader == p {
				pl.handoffPackLocked(p.leads)
			}
			pl.mu.Unlock()
			time.AfterFunc(pl.retryWait, func() { pl.resend(p) })
			return
		}
		err := jetstream.ErrNoStreamResponse
		if p.unsure { // an earlier send may be stored
			err = jetstream.ErrAsyncPublishTimeout
		}
		p.finish(Ack{}, err)
		pl.removeLocked(p)
		pl.mu.Unlock()
		return
	}
	// Answered before it leaves flight: the log is idle (Close returns) only
	// once every append in it is answered.
	p.resolve(parsePubAck(m.Data))
	pl.removeLocked(p)
	pl.mu.Unlock()
}

// resend sends p again, unless it left flight meanwhile.
func (pl *pipeline) resend(p *Pending) {
	pl.mu.Lock()
	if pl.inflight[p.id] != p {
		pl.mu.Unlock()
		return
	}
	pl.startLocked(p)
	pl.mu.Unlock()
	if err := pl.nc.PublishMsg(&p.msg); err != nil {
		if p.packed && p.unsure {
			return // stays in flight: sent again when its timeout passes (packUnanswered)
		}
		pl.failInFlight(p, err)
	}
}

// failInFlight fails p with err if it is still in flight, and takes it out:
// answered first, so that the log is idle only once every append is answered.
// It takes pl.mu.
func (pl *pipeline) failInFlight(p *Pending, err error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.inflight[p.id] == p {
		p.finish(Ack{}, err)
		pl.removeLocked(p)
	}
}

// sweep fails the appends whose acknowledgement is past its deadline, and sets
// the timer for the earliest deadline left.
func (pl *pipeline) sweep() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	now := time.Now()
	var next time.Time
	for _, p := range pl.inflight {
		switch {
		case p.deadline.IsZero(): // waits to be sent again: no timeout meanwhile
		case !p.deadline.After(now):
			if p.packed && pl.packUnanswered(p, now) {
				continue
			}
			p.finish(Ack{}, jetstream.ErrAsyncPublishTimeout)
			pl.removeLocked(p)
		case next.IsZero() || p.deadline.Before(next):
			next = p.deadline
		}
	}
	pl.armed = !next.IsZero()
	if pl.armed {
		pl.timer.Reset(next.Sub(now))
	}
}

// watch fails every append in flight when the connection is lost, and when it
// closes for good (its reconnects spent, or closed while reconnecting): their
// acknowledgements will not come on the next one, nor at all.
func (pl *pipeline) watch(status <-chan nats.Status) {
	for s := range status {
		pl.mu.Lock()
		for _, p := range pl.inflight {
			if p.packed && s != nats.CLOSED {
				// It may be stored, and its id keeps a copy sent again from
				// being stored twice: its timeout sends it again
				// (packUnanswered).
				p.unsure = true
				continue
			}
			p.finish(Ack{}, nats.ErrDisconnected)
			pl.removeLocked(p)
		}
		pl.mu.Unlock()
		if s == nats.CLOSED {
			return
		}
	}
}

// complete is closed once no append is in flight.
func (pl *pipeline) complete() <-chan struct{} {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.inflight) == 0 && pl.settling == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if pl.idle == nil {
		pl.idle = make(chan struct{})
	}
	return pl.idle
}

// pending is how many appends are in flight.
func (pl *pipeline) pending() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.inflight) + pl.settling
}

// resolve completes p with its acknowledgement or its error, once.
func (p *Pending) resolve(ack Ack, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != inFlight {
		return
	}
	if err != nil {
		p.state, p.err = failed, err
		if p.failCh != nil {
			close(p.failCh)
		}
	} else {
		p.state, p.ack = acked, ack
		if p.okCh != nil {
			p.okCh <- &p.ack
		}
	}
	if p.done != nil {
		close(p.done)
	}
}

// Stored is ready once the stream has stored the append (never, for a nil
// Pending), for a caller that waits on more than the append.
func (p *Pending) Stored() <-chan *Ack {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.okCh == nil {
		p.okCh = make(chan *Ack, 1)
		if p.state == acked {
			p.okCh <- &p.ack
		}
	}
	return p.okCh
}

// Failed is closed once the stream will not acknowledge the append (never, for
// a nil Pending); Err then says why, to be read through AppendError. A closed
// channel, not one carrying the error: the one allocation of a wait that a
// failure ends.
func (p *Pending) Failed() <-chan struct{} {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failCh == nil {
		p.failCh = make(chan struct{})
		if p.state == failed {
			close(p.failCh)
		}
	}
	return p.failCh
}

// Err is the append's error once it has failed (Failed is closed), else nil.
func (p *Pending) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != failed {
		return nil
	}
	return p.err
}

// Acknowledged is p's acknowledgement once the stream has stored the append;
// ok is false until then, and after a failure. Unlike Stored, it takes nothing
// from anybody's wait.
func (p *Pending) Acknowledged() (ack Ack, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ack, p.state == acked
}

// Duplicate reports whether the stream answered that the append's event id was
// stored already: its sequence is then the earlier copy's, which may hold other
// data than this append's (another node's receipt for the same invocation).
// False until the append is acknowledged.
func (p *Pending) Duplicate() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state == acked && p.ack.Duplicate
}

// outcome is p's acknowledgement or error once resolved; else ok is false and
// done is closed when it is (made now, so an append acknowledged before its
// wait begins costs no channel).
func (p *Pending) outcome() (seq uint64, err error, ok bool, done <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case acked:
		return p.ack.Sequence, nil, true, nil
	case failed:
		return 0, p.err, true, nil
	}
	if p.done == nil {
		p.done = make(chan struct{})
	}
	return 0, nil, false, p.done
}

// withMsgID gives p's message the Nats-Msg-Id header its event id was kept for
// (msgID), as it is about to be sent alone or in a batch. It comes before any
// other header: p's message has none yet.
func (p *Pending) withMsgID() {
	if p.msgID == "" {
		return
	}
	p.msg.Header = msgIDHeader(p.msgID)
	p.msgID = ""
}
