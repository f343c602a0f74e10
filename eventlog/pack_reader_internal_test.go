package eventlog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

// A transient reader decompresses each pack into a buffer it puts back once
// the pack's batch is released, and uses what it made for the last pack
// again: reading a compressed pack then allocates only what each event's
// envelope needs (its strings), one allocation an event, and the subject its
// events share, where a reader that is not transient also allocates the
// pack's buffer. What either reads is the
// pack's events, byte for byte.
func TestTransientPackReaderAllocatesOnlyTheEvents(t *testing.T) {
	const n = 8
	pack := []byte{wire.PackFormat}
	var want [][]byte
	for i := range n {
		ev, err := wire.NewEventWithID(fmt.Sprintf("01JX%022d", i), time.Date(2026, 12, 6, 0, 0, 0, i, time.UTC), wire.TypeInvocationRequested, "owner:terminal-key",
			map[string]string{"key": "WEATHER", "body": strings.Repeat("city=Lisbon&", 10)})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := wire.Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, enc)
		pack = wire.AppendPacked(pack, wire.RequestSubject("WEATHER"), enc)
	}
	compressed := wire.CompressPack(pack)
	if compressed[0] != wire.PackFormatS2 {
		t.Fatal("the pack was not compressed")
	}
	read := func(r *packReader) []Stored {
		out := r.events(wire.DataStream, wire.RequestPackSubject, 7, compressed)
		for i, s := range out {
			if s.Invalid != "" || s.Part != i || s.Parts != n || s.ID == "" {
				t.Fatalf("event %d read as %+v", i, s)
			}
		}
		return out
	}
	transient, plain := &packReader{transient: true}, &packReader{}
	for i, s := range read(transient) {
		ev, err := wire.Decode(want[i])
		if err != nil || s.ID != ev.ID || !bytes.Equal(s.Data, ev.Data) {
			t.Fatalf("event %d read as %s %q, want %s %q", i, s.ID, s.Data, ev.ID, ev.Data)
		}
	}
	reused := allocstest.PerRun(t, 50, func() { release(read(transient)) })
	fresh := allocstest.PerRun(t, 50, func() { read(plain) })
	if reused != n+1 || fresh != n+2 {
		t.Errorf("reading a compressed pack of %d events allocates %v times transient, %v not; want %d and %d", n, reused, fresh, n+1, n+2)
	}
}
