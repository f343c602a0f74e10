package eventlog_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// openPacking opens an embedded log in dir with packs as mode says.
func openPacking(t *testing.T, cfg eventlog.Config) *eventlog.Log {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	l, err := eventlog.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// packAppend appends n requests (on keys K0..K2) marked Packed while l's
// request packer is held, so that they go out as one pack, and returns the
// events and their appends.
func packAppend(t *testing.T, l *eventlog.Log, n int, subject func(i int) string) ([]wire.Event, []*eventlog.Pending) {
	t.Helper()
	evs := events(t, l, n)
	return evs, packAppendEvents(t, l, evs, subject)
}

// packAppendEvents is packAppend of the requests evs.
func packAppendEvents(t *testing.T, l *eventlog.Log, evs []wire.Event, subject func(i int) string) []*eventlog.Pending {
	t.Helper()
	release := l.HoldPacks(wire.RequestPackSubject)
	defer release()
	ps := make([]*eventlog.Pending, len(evs))
	for i, ev := range evs {
		p, err := l.AppendAsync(subject(i), ev, eventlog.Packed())
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

func requestOn(i int) string { return wire.RequestSubject(fmt.Sprintf("K%d", i%3)) }

// Appends marked Packed and made together share one message: each is answered
// with its sequence, every reader sees each event on its own subject, in order,
// with its place in the pack, the pack is stored compressed, and the log counts
// one pack.
func TestPackedAppendsShareOneMessage(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	if !l.Packing() {
		t.Fatal("an embedded log no other node shares does not pack by default")
	}
	made := make(chan int, 4)
	l.OnPackMade(func(data []byte) { made <- len(data) })
	evs, ps := packAppend(t, l, 10, requestOn)
	var packSize int
	select {
	case packSize = <-made:
	case <-time.After(10 * time.Second):
		t.Fatal("no pack made")
	}
	want := 1
	for i := range evs {
		b, err := wire.Encode(&evs[i])
		if err != nil {
			t.Fatal(err)
		}
		want += wire.PackedSize(requestOn(i), b)
	}
	if packSize != want {
		t.Fatalf("a pack of %d bytes made; want %d, its format and its ten events", packSize, want)
	}
	var seq uint64
	for i, p := range ps {
		s, err := eventlog.AwaitAck(context.Background(), p)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if i > 0 && s != seq {
			t.Fatalf("append %d at %d, append 0 at %d: not one message", i, s, seq)
		}
		seq = s
	}
	if last, _ := l.LastSeq(context.Background(), wire.DataStream); last != seq {
		t.Fatalf("the stream's last sequence is %d; want the pack's, %d", last, seq)
	}
	// Its events are alike, so the pack is stored compressed.
	raw, err := l.ReadRaw(context.Background(), wire.DataStream, seq)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Data[0] != wire.PackFormatS2 || len(raw.Data) >= packSize {
		t.Fatalf("the pack of %d bytes is stored as %d bytes (format %d); want it compressed", packSize, len(raw.Data), raw.Data[0])
	}
	if packs, packed := l.Packs(); packs != 1 || packed != 10 {
		t.Fatalf("Packs() = %d, %d; want 1, 10", packs, packed)
	}
	var got []eventlog.Stored
	if err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		got = append(got, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("read %d events; want 10", len(got))
	}
	for i, s := range got {
		if s.Invalid != "" || s.ID != evs[i].ID || string(s.Data) != string(evs[i].Data) || s.Subject != requestOn(i) ||
			s.Seq != seq || s.Part != i || s.Parts != 10 {
			t.Fatalf("event %d read as %+v; want %s on %s at %d, part %d of 10", i, s, evs[i].ID, requestOn(i), seq, i)
		}
	}
	read, err := l.ReadEvents(context.Background(), wire.DataStream, seq)
	if err != nil || len(read) != 10 || read[3].ID != evs[3].ID || read[3].Part != 3 {
		t.Fatalf("ReadEvents(%d) = %d events, %v", seq, len(read), err)
	}
	if one, err := l.ReadSeq(context.Background(), wire.DataStream, seq); err != nil || one.Invalid == "" {
		t.Fatalf("ReadSeq of a pack = %+v, %v; want it refused as a pack", one, err)
	}
}

// Without Packed, with packs off, or on a subject no pack carries, every
// append is a message of its own.
func TestUnpackedAppendsGoAlone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pack    string
		subject func(int) string
		opts    []eventlog.AppendOption
	}{
		{"not marked", "", requestOn, nil},
		{"packs off", eventlog.PackOff, requestOn, []eventlog.AppendOption{eventlog.Packed()}},
		{"a step", eventlog.PackOn, func(i int) string { return wire.StepSubject("K") }, []eventlog.AppendOption{eventlog.Packed()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openPacking(t, eventlog.Config{Pack: tc.pack})
			release := l.HoldPacks(wire.RequestPackSubject)
			var ps []*eventlog.Pending
			for i, ev := range events(t, l, 5) {
				p, err := l.AppendAsync(tc.subject(i), ev, tc.opts...)
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, p)
			}
			release()
			for i, p := range ps {
				if seq, err := eventlog.AwaitAck(context.Background(), p); err != nil || seq != uint64(i+1) {
					t.Fatalf("append %d: %d, %v; want sequence %d", i, seq, err, i+1)
				}
			}
			if packs, _ := l.Packs(); packs != 0 {
				t.Fatalf("%d packs", packs)
			}
		})
	}
}

// storedWithID checks that the message at seq carries ev alone, under ev's id
// (Nats-Msg-Id): the log's duplicate detection knows it.
func storedWithID(t *testing.T, l *eventlog.Log, ev wire.Event, seq uint64) {
	t.Helper()
	holdsAt(t, l, ev, seq)
	s, err := l.JetStream().Stream(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(context.Background(), seq)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get(jetstream.MsgIDHeader); got != ev.ID {
		t.Fatalf("the message at %d carries Nats-Msg-Id %q, want %s", seq, got, ev.ID)
	}
}

// An append a pack may carry that goes alone (nothing in flight to wait for,
// packs off, or its pack refused whole) is sent under its event id, as any
// append is: sent again, the log stores it once.
func TestAnAppendAPackMayCarryGoesAloneUnderItsID(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{eventlog.PackOn, eventlog.PackOff} {
		l := openPacking(t, eventlog.Config{Pack: mode})
		ev := events(t, l, 1)[0]
		var seqs []uint64
		for range 2 {
			p, err := l.AppendAsync(requestOn(0), ev, eventlog.Packed())
			if err != nil {
				t.Fatal(err)
			}
			seq, err := eventlog.AwaitAck(ctx, p)
			if err != nil {
				t.Fatalf("packs %s: %v", mode, err)
			}
			seqs = append(seqs, seq)
		}
		if seqs[0] != seqs[1] {
			t.Fatalf("packs %s: the same event appended twice alone stored at %v", mode, seqs)
		}
		storedWithID(t, l, ev, seqs[0])
	}
	// One that waited for a pack in flight and found no other to share it.
	l := openPacking(t, eventlog.Config{Pack: eventlog.PackOn})
	evs, ps := packAppend(t, l, 1, requestOn)
	seq, err := eventlog.AwaitAck(ctx, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	storedWithID(t, l, evs[0], seq)
}

// Config.Pack: auto packs on a log no other node shares, on and off force it,
// and anything else is refused naming the setting.
func TestPackSetting(t *testing.T) {
	if l := openPacking(t, eventlog.Config{Pack: eventlog.PackOff}); l.Packing() {
		t.Fatal("off packs")
	}
	if l := openPacking(t, eventlog.Config{Pack: eventlog.PackOn}); !l.Packing() {
		t.Fatal("on does not pack")
	}
	err := eventlog.Config{DataDir: t.TempDir(), Pack: "yes"}.ValidateSet()
	if err == nil || !strings.Contains(err.Error(), "--log-pack") || !strings.Contains(err.Error(), `"yes"`) {
		t.Fatalf("an unknown pack setting: %v", err)
	}
}

// A follower's batch never splits a pack: a batch ends with the last event of
// its message, whatever Max says, and every event comes once, in order.
func TestBatchesKeepAPackWhole(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	var want []string
	for round := 0; round < 3; round++ {
		if _, err := l.Append(context.Background(), wire.ReceiptSubject("K"), mustEvent(t, l, wire.TypeReceipt, map[string]int{"r": round})); err != nil {
			t.Fatal(err)
		}
		want = append(want, "single")
		evs, ps := packAppend(t, l, 7, requestOn)
		for _, p := range ps {
			if _, err := eventlog.AwaitAck(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
		for _, ev := range evs {
			want = append(want, ev.ID)
		}
	}
	last, _ := l.LastSeq(context.Background(), wire.DataStream)
	var got []string
	err := l.ReadRange(context.Background(), wire.DataStream, 1, last, 3, func(b []eventlog.Stored) error {
		if b[len(b)-1].More() {
			t.Errorf("a batch of %d ends with part %d of %d", len(b), b[len(b)-1].Part, b[len(b)-1].Parts)
		}
		for _, s := range b {
			if s.Parts > 1 {
				got = append(got, s.ID)
			} else {
				got = append(got, "single")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("read %v\nwant %v", got, want)
	}
}

// A pack the stream refuses whole (here: over the stream's largest message,
// though each of its appends is not, and compressed no smaller) stored
// nothing, and its appends are sent again alone, each to its own answer.
func TestPackRefusedWholeGoesAlone(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	ctx := context.Background()
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.MaxMsgSize = 600
	if _, err := l.JetStream().UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	evs := make([]wire.Event, 6)
	for i := range evs {
		noise := make([]byte, 150) // random: the pack does not compress under the limit
		rand.Read(noise)
		evs[i] = mustEvent(t, l, wire.TypeInvocationRequested, map[string][]byte{"noise": noise})
	}
	ps := packAppendEvents(t, l, evs, requestOn)
	seen := map[uint64]bool{}
	for i, p := range ps {
		seq, err := eventlog.AwaitAck(ctx, p)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if seen[seq] {
			t.Fatalf("append %d at %d, as another", i, seq)
		}
		seen[seq] = true
		storedWithID(t, l, evs[i], seq)
	}
	if packs, _ := l.Packs(); packs != 0 {
		t.Fatalf("%d packs stored", packs)
	}
}

// A pack whose answer is lost is sent again, the same, and the log stores it
// once: each append is answered with the one copy's sequence.
func TestPackWithoutAnswerSentAgainStoredOnce(t *testing.T) {
	l := openPacking(t, eventlog.Config{AckTimeout: 300 * time.Millisecond})
	l.DropPackAnswers(2)
	_, ps := packAppend(t, l, 5, requestOn)
	var seq uint64
	for i, p := range ps {
		s, err := eventlog.AwaitAck(context.Background(), p)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		seq = s
	}
	if last, _ := l.LastSeq(context.Background(), wire.DataStream); last != 1 || seq != 1 {
		t.Fatalf("the stream holds %d messages, the appends at %d; want the one pack at 1", last, seq)
	}
	n := 0
	l.Read(context.Background(), wire.DataStream, 1, func(eventlog.Stored) error { n++; return nil })
	if n != 5 {
		t.Fatalf("%d events in the log; want 5", n)
	}
}

// A message on a pack subject that is not a pack, or a pack carrying an event
// of a kind its subject may not carry, is read as not valid, and the log reads
// on past it.
func TestHostilePacksReadAsNotValid(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	ctx := context.Background()
	ev := mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{"key": "K"})
	data, _ := wire.Encode(&ev)
	entry := func(subject string, d []byte) []byte { return wire.AppendPacked(nil, subject, d) }
	hostile := map[string][]byte{
		"empty":              {},
		"json":               data,
		"wrong format":       append([]byte{0x7f}, entry(wire.RequestSubject("K"), data)...),
		"length past end":    append([]byte{0x01}, entry(wire.RequestSubject("K"), data)[:20]...),
		"no event":           {0x01},
		"empty subject":      append([]byte{0x01}, entry("", data)...),
		"huge length":        append([]byte{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, data...),
		"directory in a req": append([]byte{0x01}, entry(wire.DirectorySubject("K"), data)...),
		"receipt in a req":   append([]byte{0x01}, entry(wire.ReceiptSubject("K"), data)...),
		// Compressed: a block claiming more than wire.MaxPackContent (read as not
		// a pack before anything is allocated for it), one cut short, one whose
		// bytes do not decode, and a valid block carrying a receipt.
		"compressed, claims too much": append(append([]byte{wire.PackFormatS2}, binary.AppendUvarint(nil, wire.MaxPackContent+1)...), 0, 0, 0),
		"compressed, cut":             cutCompressed(entry(wire.RequestSubject("K"), data)),
		"compressed, not a block":     append([]byte{wire.PackFormatS2, 0x10}, bytes.Repeat([]byte{0xfd}, 40)...),
		"compressed receipt in a req": wire.CompressPack(append(append([]byte{0x01}, entry(wire.ReceiptSubject("K"), data)...), entry(wire.ReceiptSubject("K"), data)...)),
	}
	if c := hostile["compressed receipt in a req"]; c[0] != wire.PackFormatS2 {
		t.Fatal("the compressed case is not compressed")
	}
	names := []string{}
	for name, d := range hostile {
		if _, err := l.JetStream().Publish(ctx, wire.RequestPackSubject, d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names = append(names, name)
	}
	good, err := l.Append(ctx, wire.RequestSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	var got []eventlog.Stored
	if err := l.Read(ctx, wire.DataStream, 1, func(s eventlog.Stored) error { got = append(got, s); return nil }); err != nil {
		t.Fatal(err)
	}
	// Each hostile message is one event not valid, but the compressed pack of
	// two receipts, two.
	hostileEvents := len(names) + 1
	if len(got) != hostileEvents+1 {
		t.Fatalf("read %d events; want %d", len(got), hostileEvents+1)
	}
	for i, s := range got[:hostileEvents] {
		if s.Invalid == "" || s.Subject != wire.RequestPackSubject || s.Type != "" {
			t.Errorf("hostile pack %d read as %+v; want it not valid, on the pack's subject", i, s)
		}
	}
	if last := got[len(got)-1]; last.Invalid != "" || last.Seq != good || last.ID != ev.ID {
		t.Fatalf("the event after them read as %+v", last)
	}
}

// A durable consumer hands a pack over as its events, each answered on its
// own; the pack is acknowledged once all are, and delivered again, whole, when
// any asked for it.
func TestConsumerHandsOverAPackAsItsEvents(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	ctx := context.Background()
	cons, err := l.OpenDurable(ctx, wire.DataStream, eventlog.Durable{Name: "parts", Subjects: wire.AllRequestSubjects, AckWait: 30 * time.Second, MaxDeliver: 5, MaxAckPending: 100})
	if err != nil {
		t.Fatal(err)
	}
	evs, ps := packAppend(t, l, 3, requestOn)
	for _, p := range ps {
		if _, err := eventlog.AwaitAck(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan eventlog.Msg, 16)
	cc, err := cons.Consume(8, func(m eventlog.Msg) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Drain()
	take := func(n int) []eventlog.Msg {
		var ms []eventlog.Msg
		for range n {
			select {
			case m := <-got:
				ms = append(ms, m)
			case <-time.After(10 * time.Second):
				t.Fatalf("%d of %d events handed over", len(ms), n)
			}
		}
		return ms
	}
	first := take(3)
	// The parts go to handlers that run at once: each reads its metadata (the
	// pack's) without the others (the race detector watches this).
	var wg sync.WaitGroup
	for _, m := range first {
		wg.Go(func() { m.Metadata() })
	}
	wg.Wait()
	for i, m := range first {
		md, err := m.Metadata()
		if err != nil || md.NumDelivered != 1 || m.Subject() != requestOn(i) || !strings.Contains(string(m.Data()), evs[i].ID) {
			t.Fatalf("event %d handed over as %s %q (%+v, %v)", i, m.Subject(), m.Data(), md, err)
		}
	}
	first[0].Ack()
	first[1].Term()
	first[2].Nak()
	again := take(3)
	for i, m := range again {
		if md, _ := m.Metadata(); md.NumDelivered != 2 || m.Subject() != requestOn(i) {
			t.Fatalf("event %d delivered again as %s, delivery %d", i, m.Subject(), md.NumDelivered)
		}
		m.Ack()
	}
	select {
	case m := <-got:
		t.Fatalf("%s delivered again after every event of its pack was acknowledged", m.Subject())
	case <-time.After(500 * time.Millisecond):
	}
}

// A pack whose events wait for a handler to take them is kept in progress by
// its consumption past the ack wait; once every event was taken, only their
// handlers keep it, and one abandoned without an answer (a crash) brings the
// pack back after the ack wait.
func TestAPackIsKeptInProgressUntilItsEventsAreTaken(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	ctx := context.Background()
	const ackWait = time.Second
	cons, err := l.OpenDurable(ctx, wire.DataStream, eventlog.Durable{Name: "taken", Subjects: wire.AllRequestSubjects, AckWait: ackWait, MaxDeliver: 5, MaxAckPending: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, ps := packAppend(t, l, 3, requestOn)
	for _, p := range ps {
		if _, err := eventlog.AwaitAck(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan eventlog.Msg, 16)
	cc, err := cons.Consume(8, func(m eventlog.Msg) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Drain()
	var first []eventlog.Msg
	for range 3 {
		first = append(first, <-got)
	}
	// Untaken for three ack waits: not delivered again.
	select {
	case m := <-got:
		md, _ := m.Metadata()
		t.Fatalf("an event of a pack waiting for its handlers delivered again (delivery %d)", md.NumDelivered)
	case <-time.After(3 * ackWait):
	}
	for _, m := range first {
		eventlog.Taken(m)
	}
	first[0].Ack()
	first[1].Ack() // the third is abandoned, unanswered
	select {
	case m := <-got:
		if md, _ := m.Metadata(); md.NumDelivered != 2 {
			t.Fatalf("delivery %d", md.NumDelivered)
		}
	case <-time.After(10 * ackWait):
		t.Fatal("a pack whose taken event was abandoned was not delivered again")
	}
}

// cutCompressed is the compressed pack of entry, its last bytes cut off.
func cutCompressed(entry []byte) []byte {
	c := wire.CompressPack(append(append([]byte{wire.PackFormat}, entry...), entry...))
	return c[:len(c)-4]
}

// A pack that compresses further than wire.MaxPackRatio (events of one byte
// repeated) is stored as it was made, in a buffer of its own, and reads back
// as its events.
func TestPackCompressingTooFarIsStoredAsItIs(t *testing.T) {
	l := openPacking(t, eventlog.Config{})
	ctx := context.Background()
	evs := make([]wire.Event, 5)
	for i := range evs {
		evs[i] = mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{"x": strings.Repeat("a", 64<<10)})
	}
	ps := packAppendEvents(t, l, evs, requestOn)
	var seq uint64
	for i, p := range ps {
		s, err := eventlog.AwaitAck(ctx, p)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		seq = s
	}
	// The pack after it is made in the same scratch buffer, and reads back as
	// its own. It is made once the first is answered: while that is in flight
	// HoldPacks holds nothing, and the next appends could go out in two packs.
	next, nps := packAppend(t, l, 5, requestOn)
	for i, p := range nps {
		if _, err := eventlog.AwaitAck(ctx, p); err != nil {
			t.Fatalf("append %d of the next pack: %v", i, err)
		}
	}
	raw, err := l.ReadRaw(ctx, wire.DataStream, seq)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Data[0] != wire.PackFormat {
		t.Fatalf("a pack of one byte repeated stored in format %d; want %d, as it was made", raw.Data[0], wire.PackFormat)
	}
	read, err := l.ReadEvents(ctx, wire.DataStream, seq)
	if err != nil || len(read) != len(evs) {
		t.Fatalf("ReadEvents(%d) = %d events, %v", seq, len(read), err)
	}
	for i, s := range read {
		if s.ID != evs[i].ID || !bytes.Equal(s.Data, evs[i].Data) {
			t.Fatalf("event %d read as %s %.40q; want %s", i, s.ID, s.Data, evs[i].ID)
		}
	}
	if got, err := l.ReadEvents(ctx, wire.DataStream, seq+1); err != nil || len(got) != len(next) || got[0].ID != next[0].ID {
		t.Fatalf("the next pack read as %d events, %v", len(got), err)
	}
}
