package eventlog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// groupCommit is the pipeline's group commit (Config.GroupCommit): an async
// append to the data stream that finds none in flight is sent at once, alone,
// and leads; those that arrive while the leader is in flight wait, and when it
// leaves flight (acknowledged, refused, timed out, or sent again while its
// stream elects a leader) they are sent together as the next leader, one
// JetStream atomic batch: each append a message of the batch, the last one
// committing it, one acknowledgement for all (the last sequence and the count).
// The server stores a batch whole, its messages one after another with no other
// between them, or nothing: an append's sequence is its place counted back from
// the last. A batch refused whole (an append's event id already stored, or
// twice in the batch, since the server refuses a duplicate in a batch where it
// answers one alone with the first's sequence; an append over a limit of the
// stream's; the batch's size; too many batches open; the stream not allowing
// them) stored nothing, so its appends are sent again one at a time, each to
// its own answer, as they would have been without group commit; one refused
// for the server's max_batch_size caps the later batches at it (learnLimit). A
// batch that gets no answer fails every append in it as one alone would fail;
// one whose answer does not match it sends again alone the appends that carry
// their event id, and fails the others (batchUnmatched).
//
// Appends that expect their subject's last sequence go alone (the server checks
// a batch's expectations against the stream as the batch stands, which is not
// what each append asked), as do appends that are not the data stream's, or
// that come close to the server's largest message (their refusal is the
// sender's, at once).
type groupCommit struct {
	on      atomic.Bool // the data stream allows atomic batches and the log asks for them
	batches atomic.Uint64
	refused atomic.Uint64 // batches refused whole and sent again one at a time
	// why is the last refusal's reason, as the server gave it.
	why atomic.Pointer[string]
	// limit is the largest batch the server takes, once it refused a larger one
	// (learnLimit); 0 until then: maxBatch.
	limit atomic.Int64

	// Under pipeline.mu:
	leader  *Pending   // in flight, or being sent: the appends arriving wait for it
	waiting []*Pending // what the next batch will be
}

// maxBatch bounds a batch, below the server's default (1000 messages); an
// append that finds that many waiting (or the server's lower limit, once it
// said it) goes alone.
const maxBatch = 256

// groupHeadroom is what a grouped append leaves of the server's largest
// message, for the batch's headers.
const groupHeadroom = 1 << 10

// startGroupCommit turns group commit on when the configuration asks for it and
// the data stream, as the server holds it, allows atomic batches (a stream
// opened as it is, or kept by a server that predates them, may not).
func (l *Log) startGroupCommit() {
	s, ok := l.streams[wire.DataStream]
	l.pl.group.on.Store(ok && l.cfg.groupCommit() && s.CachedInfo().Config.AllowAtomicPublish)
}

// dataSubjects is the prefix of every subject of the data stream.
var dataSubjects = strings.TrimSuffix(wire.StreamSubjects(wire.DataStream)[0], ">")

// isDataSubject reports whether subject is on the data stream.
func isDataSubject(subject string) bool { return strings.HasPrefix(subject, dataSubjects) }

// submit sends p: in a pack when packable and packs are on, with group commit
// when groupable and on, else alone.
func (pl *pipeline) submit(p *Pending, groupable, packable bool) error {
	if packable && pl.packs.on.Load() {
		if ps, ok := wire.PackSubject(p.msg.Subject); ok {
			return pl.submitPacked(p, pl.packs.of(ps))
		}
	}
	p.withMsgID()
	if !groupable || !pl.group.on.Load() || len(p.msg.Data) > int(pl.maxPayload.Load())-groupHeadroom {
		return pl.send(p)
	}
	g := &pl.group
	pl.mu.Lock()
	switch {
	case g.leader == nil:
		g.leader = p
		pl.mu.Unlock()
		if err := pl.send(p); err != nil {
			pl.mu.Lock()
			if g.leader == p { // never in flight (send removes what it registered)
				pl.handoffLocked()
			}
			pl.mu.Unlock()
			return err
		}
		return nil
	case len(g.waiting) < g.maxSize():
		p.pl, p.ackTimeout, p.grouped = pl, pl.ackTimeout, true
		g.waiting = append(g.waiting, p)
		pl.mu.Unlock()
		return nil
	}
	pl.mu.Unlock()
	return pl.send(p)
}

// handoffLocked makes the appends waiting the next leader, in flight at once
// (so that the log is not idle while they wait to be written): one alone, more
// as a batch, sent by another goroutine.
func (pl *pipeline) handoffLocked() {
	g := &pl.group
	w := g.waiting
	g.waiting = nil
	if k := g.maxSize(); len(w) > k { // waiting since before the server said its limit
		w, g.waiting = w[:k:k], w[k:]
	}
	if len(w) == 0 {
		g.leader = nil
		return
	}
	next := w[0]
	if len(w) > 1 {
		next = &Pending{pl: pl, ackTimeout: pl.ackTimeout, members: w}
	}
	g.leader = next
	id := pl.next.Add(1)
	var b [64]byte
	next.msg.Reply = string(strconv.AppendUint(append(b[:0], pl.prefix...), id, 36))
	next.id = id
	pl.inflight[id] = next
	pl.startLocked(next)
	go pl.publish(next)
}

// publish sends p, registered in flight: an append alone, or a batch.
func (pl *pipeline) publish(p *Pending) {
	var err error
	if p.members == nil || p.packed {
		err = pl.nc.PublishMsg(&p.msg)
	} else {
		err = pl.publishBatch(p)
	}
	if err != nil {
		pl.failInFlight(p, err)
	}
}

// publishBatch sends p's members as one atomic batch, its id p's reply subject
// (unique to the log's inbox), the last message committing it with p's reply
// subject. Each message is a copy of its append's with the batch's headers, so
// that the append can be sent again alone as it was.
func (pl *pipeline) publishBatch(p *Pending) error {
	id := p.msg.Reply
	if len(id) > 64 { // the server's bound on a batch id
		id = id[len(id)-64:]
	}
	g := &pl.group
	g.batches.Add(1)
	for i, a := range p.members {
		h := make(nats.Header, len(a.msg.Header)+3)
		for k, v := range a.msg.Header {
			h[k] = v
		}
		h[jetstreamext.BatchIDHeader] = []string{id}
		h[jetstreamext.BatchSeqHeader] = []string{strconv.Itoa(i + 1)}
		m := nats.Msg{Subject: a.msg.Subject, Data: a.msg.Data, Header: h}
		if i == len(p.members)-1 {
			h[jetstreamext.BatchCommitHeader] = []string{"1"}
			m.Reply = p.msg.Reply
		}
		if err := pl.nc.PublishMsg(&m); err != nil {
			return err
		}
	}
	return nil
}

// batchAck is the server's answer to a batch's commit.
type batchAck struct {
	Error *jetstream.APIError `json:"error,omitempty"`
	jetstreamext.BatchAck
}

// jsAtomicPublishDisabled is the server's error code for a batch the stream
// does not allow.
const jsAtomicPublishDisabled = 10174

// batchAcknowledged completes the batch p, out of flight and settling
// (pipeline.settling), with the answer m: each append its sequence, or, for a
// batch refused whole, each sent again alone. It ends p's settling once its
// appends are completed or in flight again.
func (pl *pipeline) batchAcknowledged(p *Pending, m *nats.Msg) {
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" { // no leader yet: each goes on alone
		pl.sendAlone(p.members, "503 "+m.Header.Get("Description"))
		return
	}
	data := m.Data
	if h := pl.hooks.batchAck.Load(); h != nil {
		data = (*h)(data)
	}
	var ack batchAck
	if err := json.Unmarshal(data, &ack); err != nil {
		pl.batchUnmatched(p, err)
		return
	}
	if ack.Error != nil {
		switch ack.Error.ErrorCode {
		case jsAtomicPublishDisabled: // the stream no longer allows them
			pl.group.on.Store(false)
		case jsAtomicPublishTooLargeBatch: // the server's limit is below maxBatch
			pl.group.learnLimit(ack.Error, len(p.members))
		}
		pl.sendAlone(p.members, ack.Error.Error())
		return
	}
	n := uint64(len(p.members))
	if ack.Stream == "" || ack.BatchSize != n || ack.Sequence < n {
		pl.batchUnmatched(p, fmt.Errorf("stream %q, last sequence %d, %d messages, for a batch of %d", ack.Stream, ack.Sequence, ack.BatchSize, n))
		return
	}
	defer pl.settled()
	first := ack.Sequence - n + 1
	for i, a := range p.members {
		a.resolve(Ack{Stream: ack.Stream, Sequence: first + uint64(i), Domain: ack.Domain}, nil)
	}
}

// sendAlone sends each of a batch refused whole again, alone, from another
// goroutine (the inbox's handler must not wait for room in flight, which its own
// answers make).
func (pl *pipeline) sendAlone(members []*Pending, why string) {
	pl.group.why.Store(&why)
	pl.group.refused.Add(1)
	pl.sendEachAgain(members)
}

// sendEachAgain sends each of members, a batch out of flight and settling,
// again alone, from another goroutine, and ends the batch's settling once each
// is in flight again or failed.
func (pl *pipeline) sendEachAgain(members []*Pending) {
	go func() {
		if h := pl.hooks.settling.Load(); h != nil {
			(*h)()
		}
		if len(members) == 0 {
			pl.settled()
			return
		}
		for i, a := range members {
			a.msg.Reply = ""
			// The last one ends the batch's settling as it goes into flight: an
			// answer to it cannot find the log still settling the batch.
			ended, err := pl.sendSettling(a, i == len(members)-1)
			if err != nil {
				a.resolve(Ack{}, err)
			}
			if i == len(members)-1 && !ended {
				pl.settled()
			}
		}
	}()
}

// finish completes p, out of flight, with ack or err: for a batch, each of its
// appends with err (an answer lost or never sent fails each as it would fail
// one alone).
func (p *Pending) finish(ack Ack, err error) {
	if p.members == nil {
		p.resolve(ack, err)
		return
	}
	for _, a := range p.members {
		a.resolve(Ack{}, err)
	}
}
