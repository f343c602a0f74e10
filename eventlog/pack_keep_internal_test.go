package eventlog

import (
	"sync/atomic"
	"testing"
	"time"
)

// progressCounter is a delivered message that counts the InProgress sent for
// it and answers nothing else.
type progressCounter struct {
	Msg
	n atomic.Int32
}

func (m *progressCounter) InProgress() error { m.n.Add(1); return nil }

// A pack with parts waiting to be taken is kept in progress on the first tick
// after it was handed over, however soon after: the server's ack wait runs from
// when it sent the pack, which on a loaded machine can be well before the
// consumption handed it over, so a pack that waited for a second tick could be
// delivered again while its parts still queue. It is kept once a tick, no more
// often than every half interval, and not once every part is taken.
func TestAPackIsKeptOnTheFirstTickAfterItWasHandedOver(t *testing.T) {
	const interval = time.Second
	o := newOpenPacks()
	m := &progressCounter{}
	d := &packDelivery{m: m, left: 2, untaken: 2}
	o.add(d)
	now := time.Now()
	o.tick(now, interval)
	if got := m.n.Load(); got != 1 {
		t.Fatalf("a pack handed over just before a tick: %d InProgress on that tick, want 1", got)
	}
	o.tick(now.Add(interval/4), interval)
	if got := m.n.Load(); got != 1 {
		t.Fatalf("a second tick a quarter interval later sent InProgress again (%d in all)", got)
	}
	o.tick(now.Add(interval), interval)
	if got := m.n.Load(); got != 2 {
		t.Fatalf("the next tick an interval later: %d InProgress in all, want 2", got)
	}
	d.mu.Lock()
	d.untaken = 0
	d.mu.Unlock()
	o.tick(now.Add(2*interval), interval)
	if got := m.n.Load(); got != 2 {
		t.Fatalf("a pack whose parts are all taken was kept in progress by the consumption (%d in all)", got)
	}
}
