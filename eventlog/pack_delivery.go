package eventlog

import (
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// A pack delivered by a durable consumer is handed over as its events, each a
// Msg of its own (a part): its subject and data are the event's, its metadata
// and acknowledgement subject the pack's. The pack is answered once every part
// is: acknowledged when each part was acknowledged or terminated, delivered
// again (after the longest delay a part asked for) when any part asked for that.
// A part's InProgress keeps the whole pack in progress. A pack delivered again
// brings back every part, those answered before included; their handler finds
// what it did the first time (a receipt in the log) and acknowledges them.

// packDelivery is a delivered pack and what its parts have answered.
type packDelivery struct {
	m     Msg
	md    *MsgMetadata
	mdErr error // the pack's metadata, read once before its parts are handed over (they may run at once)

	mu       sync.Mutex
	untaken  int           // parts no handler has taken yet (Taken)
	left     int           // parts not answered yet
	again    bool          // a part asked for the pack to be delivered again
	delay    time.Duration // the longest delay a part asked for
	progress time.Time     // the last InProgress sent for it
	open     *openPacks    // where it is listed while parts are unanswered; nil when not listed
}

// packPart is one event of a delivered pack.
type packPart struct {
	pack     *packDelivery
	subject  string
	data     []byte
	answered bool // under pack.mu
	taken    bool // under pack.mu
}

// Parts is what a delivered message m is to its handler: m itself, or, for a
// pack, its events, each a Msg answered as described above. A message on a pack
// subject that is not a pack is m itself (its handler cannot use it, and
// terminates it).
func Parts(m Msg) []Msg { return parts(m, nil) }

func parts(m Msg, open *openPacks) []Msg {
	if !wire.IsPackSubject(m.Subject()) {
		return []Msg{m}
	}
	evs, err := wire.Unpack(m.Data())
	if err != nil {
		return []Msg{m}
	}
	d := &packDelivery{m: m, left: len(evs), untaken: len(evs)}
	d.md, d.mdErr = m.Metadata()
	out := make([]Msg, len(evs))
	for i, e := range evs {
		pt := &packPart{pack: d, subject: e.Subject, data: e.Data}
		if !wire.PackCarries(m.Subject(), e.Subject) {
			pt.subject, pt.data = m.Subject(), nil // not a request: its handler terminates it
		}
		out[i] = pt
	}
	if open != nil {
		open.add(d)
	}
	return out
}

func (p *packPart) Subject() string                 { return p.subject }
func (p *packPart) Data() []byte                    { return p.data }
func (p *packPart) Reply() string                   { return p.pack.m.Reply() }
func (p *packPart) ID() string                      { return "" } // appended in the pack, under the pack's id
func (p *packPart) Metadata() (*MsgMetadata, error) { return p.pack.md, p.pack.mdErr }
func (p *packPart) Ack() error                      { return p.answer(false, 0) }
func (p *packPart) Term() error                     { return p.answer(false, 0) }
func (p *packPart) Nak() error                      { return p.answer(true, 0) }
func (p *packPart) NakWithDelay(d time.Duration) error {
	return p.answer(true, d)
}

// Taken tells the log that m's handler has begun with it: a handler that runs
// messages from a queue calls it as it takes each. A pack is kept in progress
// by its consumption only while some of its parts wait to be taken; once all
// are, their handlers keep it (InProgress), so a pack whose part a handler
// abandoned without an answer (a crash) is delivered again after the ack wait,
// as a message would be. It does nothing for a message that is not a part.
func Taken(m Msg) {
	p, ok := m.(*packPart)
	if !ok {
		return
	}
	d := p.pack
	d.mu.Lock()
	if !p.taken {
		p.taken = true
		d.untaken--
	}
	d.mu.Unlock()
}

// InProgress keeps the pack in progress: sent at most once every half of its
// consumption's keeping interval (a second for a pack not delivered by a
// consumption), however many of its parts ask.
func (p *packPart) InProgress() error {
	d := p.pack
	d.mu.Lock()
	now := time.Now()
	if d.left == 0 || now.Sub(d.progress) < d.progressGap() {
		d.mu.Unlock()
		return nil
	}
	d.progress = now
	d.mu.Unlock()
	return d.m.InProgress()
}

// progressGap is the least time between two InProgress sent for the pack: half
// its consumption's keeping interval, a second when no consumption keeps it.
func (d *packDelivery) progressGap() time.Duration {
	if d.open != nil && d.open.interval > 0 {
		return d.open.interval / 2
	}
	return time.Second
}

// answer records the part's answer, and answers the pack once it is the last.
func (p *packPart) answer(again bool, delay time.Duration) error {
	d := p.pack
	d.mu.Lock()
	if p.answered {
		d.mu.Unlock()
		return nil
	}
	p.answered = true
	if !p.taken { // answered without being taken (given back unstarted)
		p.taken = true
		d.untaken--
	}
	d.left--
	if again {
		d.again = true
		d.delay = max(d.delay, delay)
	}
	last, open := d.left == 0, d.open
	d.mu.Unlock()
	if !last {
		return nil
	}
	if open != nil {
		open.remove(d)
	}
	switch {
	case !d.again:
		return d.m.Ack()
	case d.delay > 0:
		return d.m.NakWithDelay(d.delay)
	}
	return d.m.Nak()
}

// openPacks are the packs a consumption handed over whose parts are not all
// answered: kept in progress while some wait for a handler to take them (keep),
// so that a pack whose parts queue behind other calls is not delivered again to
// another node meanwhile.
type openPacks struct {
	interval time.Duration // how often keep runs; 0 when it does not

	mu    sync.Mutex
	packs map[*packDelivery]struct{}
}

func newOpenPacks(interval time.Duration) *openPacks {
	return &openPacks{interval: interval, packs: map[*packDelivery]struct{}{}}
}

func (o *openPacks) add(d *packDelivery) {
	o.mu.Lock()
	d.open = o
	o.packs[d] = struct{}{}
	o.mu.Unlock()
}

func (o *openPacks) remove(d *packDelivery) {
	o.mu.Lock()
	delete(o.packs, d)
	o.mu.Unlock()
}

// keep tells the server, every interval until done is closed, that each pack
// with parts still waiting to be taken is in progress. A pack is kept from the
// first tick after it was handed over, however recently that was: the server's
// AckWait runs from when it sent the pack, which may be well before the
// consumption handed it over on a loaded machine, so a pack waits at most an
// interval for its first InProgress.
func (o *openPacks) keep(done <-chan struct{}) {
	interval := o.interval
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			o.tick(now)
		}
	}
}

// tick is one of keep's ticks: each pack with parts waiting to be taken, and
// not kept in progress in the last half interval (by a tick or a part), is
// kept now.
func (o *openPacks) tick(now time.Time) {
	o.mu.Lock()
	var due []*packDelivery
	for d := range o.packs {
		d.mu.Lock()
		if d.untaken > 0 && now.Sub(d.progress) >= d.progressGap() {
			d.progress = now
			due = append(due, d)
		}
		d.mu.Unlock()
	}
	o.mu.Unlock()
	for _, d := range due {
		d.m.InProgress()
	}
}
