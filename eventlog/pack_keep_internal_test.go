package eventlog

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// packMsg is a delivered pack that counts the InProgress sent for it and
// answers nothing else.
type packMsg struct {
	Msg
	data     []byte
	progress atomic.Int32
}

func (m *packMsg) Subject() string { return wire.RequestPackSubject }
func (m *packMsg) Data() []byte    { return m.data }
func (m *packMsg) Metadata() (*MsgMetadata, error) {
	return &MsgMetadata{StreamSeq: 1, NumDelivered: 1}, nil
}
func (m *packMsg) InProgress() error { m.progress.Add(1); return nil }

// requestPack is a pack of n requests to one row.
func requestPack(t *testing.T, n int) []byte {
	t.Helper()
	pack := []byte{wire.PackFormat}
	for range n {
		ev, err := wire.NewEvent(time.Now(), wire.TypeInvocationRequested, "owner:terminal-key", map[string]string{"key": "WEATHER"})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := wire.Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		pack = wire.AppendPacked(pack, wire.RequestSubject("WEATHER"), enc)
	}
	return pack
}

// A pack with parts waiting to be taken is kept in progress on the first tick
// after it was handed over, however soon after: the server's ack wait runs from
// when it sent the pack, which on a loaded machine can be well before the
// consumption handed it over, so a pack that waited for a second tick could be
// delivered again while its parts still queue. It is kept once a tick, no more
// often than every half interval whoever asks (a tick or a part's handler), and
// not by the ticks once every part is taken.
func TestAPackIsKeptOnTheFirstTickAfterItWasHandedOver(t *testing.T) {
	const interval = 200 * time.Millisecond
	o := newOpenPacks(interval)
	m := &packMsg{data: requestPack(t, 2)}
	ps := parts(m, o)
	if len(ps) != 2 {
		t.Fatalf("%d parts, want 2", len(ps))
	}
	sent := func(want int32, what string) {
		t.Helper()
		if got := m.progress.Load(); got != want {
			t.Fatalf("%s: %d InProgress in all, want %d", what, got, want)
		}
	}
	now := time.Now()
	o.tick(now)
	sent(1, "a tick just after the pack was handed over")
	ps[0].InProgress()
	sent(1, "a part's InProgress just after a tick")
	o.tick(now.Add(interval / 4))
	sent(1, "a second tick a quarter interval later")
	time.Sleep(interval / 2)
	ps[0].InProgress()
	sent(2, "a part's InProgress half an interval after the last")
	o.tick(time.Now().Add(interval))
	sent(3, "the next tick an interval later")
	Taken(ps[0])
	Taken(ps[1])
	o.tick(time.Now().Add(2 * interval))
	sent(3, "a tick once every part is taken")
}
