package eventlog

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
)

// packer packs the appends of one pack subject (wire.Unpack, pack.go): an append marked
// Packed that finds none of its kind in flight is sent at once, alone, as it
// would be without packs, and leads; those that arrive while the leader is in
// flight wait, and when it leaves flight (acknowledged, refused, timed out, or
// waiting to be sent again) they go out as the next leader: one alone, several
// as one pack, its own message, under an id of its own (Nats-Msg-Id) so that
// the log stores it once however often it is sent.
//
// A pack's events are stored together or not at all. Each append is answered
// with the pack's sequence. A pack refused whole (a limit of the stream's, its
// disk full) stored nothing: its appends are sent again one at a time, each to
// its own answer, as group commit does. A pack that gets no answer (no
// acknowledgement within Config.AckTimeout, the connection lost) may be stored:
// it is sent again, the same, until answered, for up to half the log's
// duplicate window (packKeep), so that an append in it is never stored twice;
// only then do its appends fail, with ErrAckTimeout.
type packer struct {
	subject string   // the pack subject
	leader  *Pending // in flight: the appends arriving wait for it
	waiting []*Pending
	size    int // the waiting appends' share of a pack's data
}

// packers are the pipeline's packers, one per pack subject, and what they send.
type packers struct {
	on       atomic.Bool   // Config.Pack
	keep     time.Duration // how long a pack that got no answer is sent again
	requests packer
	receipts packer

	sent   atomic.Uint64 // packs acknowledged
	events atomic.Uint64 // appends acknowledged in packs
}

// maxPacked bounds the appends of one pack; an append that finds as many
// waiting goes alone.
const maxPacked = 256

// packHeadroom is what a pack leaves of the server's largest message, for its
// headers and format byte.
const packHeadroom = 1 << 10

func (ps *packers) of(packSubject string) *packer {
	if packSubject == wire.RequestPackSubject {
		return &ps.requests
	}
	return &ps.receipts
}

// startPacking turns packs on as Config.Pack says: on a log that no other node
// shares unless set, since every node that consumes the log must read them.
func (l *Log) startPacking() {
	ps := &l.pl.packs
	ps.keep = max(l.cfg.DuplicateWindow/2, time.Second)
	ps.on.Store(l.cfg.pack(l.OtherNodes()))
	ps.requests.subject, ps.receipts.subject = wire.RequestPackSubject, wire.ReceiptPackSubject
}

// Packing reports whether the log packs the appends marked Packed.
func (l *Log) Packing() bool { return l.pl.packs.on.Load() }

// Packs is how many packs this log's appends made and the stream acknowledged,
// and how many appends they carried.
func (l *Log) Packs() (packs, events uint64) {
	return l.pl.packs.sent.Load(), l.pl.packs.events.Load()
}

// submitPacked sends p, an append a pack may carry, through its packer k.
func (pl *pipeline) submitPacked(p *Pending, k *packer) error {
	size := wire.PackedSize(p.msg.Subject, p.msg.Data)
	pl.mu.Lock()
	switch {
	case k.leader == nil:
		k.leader, p.leads = p, k
		pl.mu.Unlock()
		if err := pl.send(p); err != nil {
			pl.mu.Lock()
			if k.leader == p { // never in flight (send removes what it registered)
				pl.handoffPackLocked(k)
			}
			pl.mu.Unlock()
			return err
		}
		return nil
	case len(k.waiting) < maxPacked && 1+k.size+size <= int(pl.maxPayload.Load())-packHeadroom:
		p.pl, p.ackTimeout, p.grouped = pl, pl.ackTimeout, true
		k.waiting = append(k.waiting, p)
		k.size += size
		pl.mu.Unlock()
		return nil
	}
	pl.mu.Unlock()
	return pl.send(p)
}

// handoffPackLocked makes the appends waiting in k the next leader, in flight
// at once: one alone, more as a pack, sent by another goroutine.
func (pl *pipeline) handoffPackLocked(k *packer) {
	w, size := k.waiting, k.size
	k.waiting, k.size = nil, 0
	if len(w) == 0 {
		k.leader = nil
		return
	}
	next := w[0]
	if len(w) > 1 {
		next = pl.newPack(k.subject, w, size)
	} else {
		next.withMsgID() // alone
	}
	next.leads = k
	k.leader = next
	id := pl.next.Add(1)
	var b [64]byte
	next.msg.Reply = string(strconv.AppendUint(append(b[:0], pl.prefix...), id, 36))
	next.id = id
	pl.inflight[id] = next
	pl.startLocked(next)
	go pl.publish(next)
}

// newPack is the pack of members, the appends that waited in a packer: one
// message on its pack subject carrying each member's subject and event, size
// bytes of them (wire.PackedSize), compressed when that makes it smaller
// (wire.CompressPack).
func (pl *pipeline) newPack(subject string, members []*Pending, size int) *Pending {
	// The pack is made in a scratch buffer with room for it, and stored as
	// wire.CompressPack gives it back: compressed, in a buffer of its own, or,
	// when it does not compress, copied out as it is.
	sp := packScratch.Get().(*[]byte)
	if cap(*sp) < 1+size {
		*sp = make([]byte, 0, 1+size)
	}
	raw := append((*sp)[:0], wire.PackFormat)
	for _, m := range members {
		raw = wire.AppendPacked(raw, m.msg.Subject, m.msg.Data)
	}
	if h := pl.hooks.packMade.Load(); h != nil {
		(*h)(raw)
	}
	data := wire.CompressPack(raw)
	if &data[0] == &raw[0] {
		data = bytes.Clone(raw)
	}
	if *sp = raw[:0]; cap(raw) <= maxKeptPackScratch {
		packScratch.Put(sp)
	}
	p := &Pending{pl: pl, ackTimeout: pl.ackTimeout, members: members, packed: true, keepUntil: time.Now().Add(pl.packs.keep)}
	p.msg = nats.Msg{Subject: subject, Data: data, Header: nats.Header{jetstream.MsgIDHeader: []string{"pack-" + ulid.Make().String()}}}
	return p
}

// packScratch holds the buffers packs are made in; one over maxKeptPackScratch
// (a pack near the server's largest message) is not kept.
var packScratch = sync.Pool{New: func() any { return new([]byte) }}

const maxKeptPackScratch = 1 << 20

// packAcknowledged completes the pack p, out of flight and settling, with the
// stream's answer m: each append its sequence, or, for a pack refused whole,
// each sent again alone.
func (pl *pipeline) packAcknowledged(p *Pending, m *nats.Msg) {
	ack, err := parsePubAck(m.Data)
	if err != nil {
		if p.unsure {
			// An earlier send may be stored after all: the appends fail as an
			// append that got no answer fails, and are not sent again here.
			defer pl.settled()
			p.finish(Ack{}, fmt.Errorf("%w (a pack sent again after no answer, then refused: %v)", jetstream.ErrAsyncPublishTimeout, err))
			return
		}
		pl.sendEachAgain(p.members)
		return
	}
	defer pl.settled()
	pl.packs.sent.Add(1)
	pl.packs.events.Add(uint64(len(p.members)))
	// A pack sent again is acknowledged as a duplicate of its first copy: the
	// events stored are these appends', not another's.
	for _, a := range p.members {
		a.resolve(Ack{Stream: ack.Stream, Sequence: ack.Sequence, Domain: ack.Domain}, nil)
	}
}

// unanswered handles a pack, in flight under pl.mu, whose acknowledgement did
// not come (its timeout passed, or its connection was lost): it may be stored,
// so it is sent again, the same, until packKeep has passed since it was made;
// then its appends fail with err. It reports whether p stays in flight.
func (pl *pipeline) packUnanswered(p *Pending, now time.Time) bool {
	p.unsure = true
	if now.After(p.keepUntil) {
		return false
	}
	p.deadline = time.Time{} // the timeout starts again with the next send
	if p.leads != nil && p.leads.leader == p {
		pl.handoffPackLocked(p.leads) // the appends waiting for it go on without it
	}
	time.AfterFunc(pl.retryWait, func() { pl.resend(p) })
	return true
}
