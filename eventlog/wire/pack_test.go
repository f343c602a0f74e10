package wire_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

var packedEvent = []byte(`{"id":"01J0000000000000000000000A","type":"RECEIPT","at":"2026-01-01T00:00:00Z","actor":"engine:n","data":{"invocation_id":"inv_1"}}`)

// A pack reads back as the events written into it, in order; what is not a
// pack is refused as one.
func TestUnpackReadsWhatWasPacked(t *testing.T) {
	b := []byte{wire.PackFormat}
	subjects := []string{wire.ReceiptSubject("A"), wire.ReceiptSubject("B"), wire.ReceiptSubject("A")}
	for i, s := range subjects {
		b = wire.AppendPacked(b, s, append(bytes.Clone(packedEvent), byte('0'+i)))
	}
	evs, err := wire.Unpack(b)
	if err != nil || len(evs) != 3 {
		t.Fatalf("Unpack = %d events, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.Subject != subjects[i] || !bytes.Equal(e.Data, append(bytes.Clone(packedEvent), byte('0'+i))) {
			t.Fatalf("event %d = %s %q", i, e.Subject, e.Data)
		}
		if !wire.PackCarries(wire.ReceiptPackSubject, e.Subject) || wire.PackCarries(wire.RequestPackSubject, e.Subject) {
			t.Fatalf("%s: carried by the wrong pack", e.Subject)
		}
	}
	if n := wire.PackedSize(subjects[0], packedEvent); n != len(wire.AppendPacked(nil, subjects[0], packedEvent)) {
		t.Fatalf("PackedSize = %d", n)
	}
	many := []byte{wire.PackFormat}
	for range wire.MaxPackEvents + 1 {
		many = wire.AppendPacked(many, "s", nil)
	}
	for name, data := range map[string][]byte{
		"empty": nil, "an event": packedEvent, "no event": {wire.PackFormat}, "cut": b[:len(b)-1],
		"empty subject": wire.AppendPacked([]byte{wire.PackFormat}, "", packedEvent), "too many": many,
		"a subject too long": wire.AppendPacked([]byte{wire.PackFormat}, string(bytes.Repeat([]byte("s"), 513)), nil),
	} {
		if _, err := wire.Unpack(data); !errors.Is(err, wire.ErrNotPack) {
			t.Errorf("%s: %v; want ErrNotPack", name, err)
		}
	}
	for _, s := range []string{wire.StepSubject("K"), wire.DirectorySubject("K"), wire.BreakerSubject("K"), wire.RequestPackSubject, wire.ReceiptPackSubject} {
		if _, ok := wire.PackSubject(s); ok {
			t.Errorf("%s may be packed", s)
		}
	}
	// A bus client's call, which a node's responder appends, goes in a request pack.
	for s, want := range map[string]string{wire.RequestSubject("K"): wire.RequestPackSubject, wire.BusRequestSubject("c", "K"): wire.RequestPackSubject,
		wire.ReceiptSubject("K"): wire.ReceiptPackSubject} {
		if got, ok := wire.PackSubject(s); !ok || got != want {
			t.Errorf("%s: packed on %q (%v); want %q", s, got, ok, want)
		}
	}
}

// A pack that compresses is written compressed and reads back as the same
// events; one that does not stays as it is; compressed data that claims too
// much or does not decode is not a pack.
func TestCompressedPackReadsAsItsEvents(t *testing.T) {
	b := []byte{wire.PackFormat}
	for i := range 20 {
		b = wire.AppendPacked(b, wire.ReceiptSubject("A"), append(bytes.Clone(packedEvent), byte('0'+i)))
	}
	c := wire.CompressPack(b)
	if c[0] != wire.PackFormatS2 || len(c) >= len(b)/3 {
		t.Fatalf("a pack of %d bytes compressed to %d, format %d", len(b), len(c), c[0])
	}
	want, err := wire.Unpack(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wire.Unpack(c)
	if err != nil || len(got) != len(want) {
		t.Fatalf("Unpack(compressed) = %d events, %v", len(got), err)
	}
	for i := range got {
		if got[i].Subject != want[i].Subject || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("event %d = %s %q, want %s %q", i, got[i].Subject, got[i].Data, want[i].Subject, want[i].Data)
		}
	}
	noise := make([]byte, 200)
	rand.Read(noise)
	if one := wire.AppendPacked([]byte{wire.PackFormat}, "s", noise); !bytes.Equal(wire.CompressPack(one), one) {
		t.Error("a pack that does not compress was written compressed")
	}
	huge := append([]byte{wire.PackFormatS2}, binary.AppendUvarint(nil, wire.MaxPackContent+1)...)
	huge = append(huge, bytes.Repeat([]byte{0}, wire.MaxPackContent/wire.MaxPackRatio)...)
	// A pack compressing further than MaxPackRatio (one event whose data is one
	// byte repeated) is left as it is; the same bytes compressed by another
	// writer are not a pack, refused before its content is allocated.
	ev := append(bytes.Clone(packedEvent[:len(packedEvent)-2]), `,"x":"`...)
	ev = append(append(ev, bytes.Repeat([]byte{'a'}, 1<<20)...), `"}}`...)
	dense := wire.AppendPacked([]byte{wire.PackFormat}, wire.ReceiptSubject("A"), ev)
	if got := wire.CompressPack(dense); !bytes.Equal(got, dense) {
		t.Fatalf("a pack of %d bytes compressing %d times was written compressed", len(dense), len(dense)/len(s2.Encode(nil, dense[1:])))
	}
	if evs, err := wire.Unpack(dense); err != nil || len(evs) != 1 || !bytes.Equal(evs[0].Data, ev) {
		t.Fatalf("Unpack(the pack left as it is) = %d events, %v", len(evs), err)
	}
	bomb := append([]byte{wire.PackFormatS2}, s2.EncodeBest(nil, dense[1:])...)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err = wire.Unpack(bomb)
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, wire.ErrNotPack) || m1.TotalAlloc-m0.TotalAlloc > 64<<10 {
		t.Errorf("a block of %d bytes claiming %d: %v, %d bytes allocated; want ErrNotPack, nothing of its size allocated", len(bomb)-1, len(dense)-1, err, m1.TotalAlloc-m0.TotalAlloc)
	}
	for name, data := range map[string][]byte{
		"claims too much": huge, "cut": c[:len(c)-3], "no block": {wire.PackFormatS2},
		"claims more than MaxPackRatio times its size": {wire.PackFormatS2, 0xff, 0xff, 0x3f, 0},
		"its block's bytes changed":                    append(bytes.Clone(c[:len(c)/2]), bytes.Repeat([]byte{0xff}, len(c)-len(c)/2)...),
	} {
		if _, err := wire.Unpack(data); !errors.Is(err, wire.ErrNotPack) {
			t.Errorf("%s: %v; want ErrNotPack", name, err)
		}
	}
}

// A pack is compressed with one allocation, the compressed pack, of its size.
func TestCompressPackAllocatesItsOutputOnly(t *testing.T) {
	b := []byte{wire.PackFormat}
	for i := range 20 {
		b = wire.AppendPacked(b, wire.ReceiptSubject("A"), append(bytes.Clone(packedEvent), byte('0'+i)))
	}
	var c []byte
	if n := allocstest.PerRun(t, 100, func() { c = wire.CompressPack(b) }); n != 1 {
		t.Errorf("CompressPack allocates %v times; want 1", n)
	}
	if len(c) != cap(c) {
		t.Errorf("a compressed pack of %d bytes in a buffer of %d", len(c), cap(c))
	}
}

// FuzzUnpack holds the pack reader to its promises on any data: it never
// panics; it hands over at most MaxPackEvents events, each with a subject of 1
// to 512 bytes; and what it reads writes back, event by event, to data (or to
// shorter data, where a length was written longer than it needs), or, for a
// compressed pack, to what its block decompresses to.
func FuzzUnpack(f *testing.F) {
	f.Add(wire.AppendPacked(wire.AppendPacked([]byte{wire.PackFormat}, wire.ReceiptSubject("K"), packedEvent), wire.ReceiptSubject("L"), packedEvent))
	f.Add(wire.AppendPacked([]byte{wire.PackFormat}, wire.DirectorySubject("K"), packedEvent))
	f.Add([]byte{wire.PackFormat})
	f.Add([]byte{wire.PackFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add(packedEvent)
	f.Add(wire.CompressPack(wire.AppendPacked(wire.AppendPacked([]byte{wire.PackFormat}, wire.ReceiptSubject("K"), packedEvent), wire.ReceiptSubject("L"), packedEvent)))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := wire.Unpack(data)
		if err != nil {
			if !errors.Is(err, wire.ErrNotPack) {
				t.Fatalf("error %v is not ErrNotPack", err)
			}
			return
		}
		if len(evs) == 0 || len(evs) > wire.MaxPackEvents {
			t.Fatalf("%d events read", len(evs))
		}
		b := []byte{wire.PackFormat}
		for _, e := range evs {
			if e.Subject == "" || len(e.Subject) > 512 {
				t.Fatalf("a subject of %d bytes", len(e.Subject))
			}
			b = wire.AppendPacked(b, e.Subject, e.Data)
		}
		if data[0] == wire.PackFormatS2 { // compared with what it decompresses to
			content, err := s2.Decode(nil, data[1:])
			if err != nil {
				t.Fatalf("read from a block that does not decode: %v", err)
			}
			data = append([]byte{wire.PackFormat}, content...)
		}
		if !bytes.Equal(b, data) && len(b) >= len(data) {
			t.Fatalf("read back as %d bytes from %d", len(b), len(data))
		}
	})
}

// Consecutive events of a pack on one subject share its string: a pack of one
// row's events is read in two allocations (its events, one subject), and each
// event still reads its own subject.
func TestUnpackSharesASubjectString(t *testing.T) {
	one := []byte{wire.PackFormat}
	for range 10 {
		one = wire.AppendPacked(one, wire.ReceiptSubject("A"), packedEvent)
	}
	if n := allocstest.PerRun(t, 100, func() { wire.Unpack(one) }); n != 2 {
		t.Errorf("a pack of 10 events on one subject allocates %v times; want 2", n)
	}
	mixed := []byte{wire.PackFormat}
	subjects := []string{wire.ReceiptSubject("A"), wire.ReceiptSubject("A"), wire.ReceiptSubject("B"), wire.ReceiptSubject("A"), wire.ReceiptSubject("B"), wire.ReceiptSubject("B")}
	for _, s := range subjects {
		mixed = wire.AppendPacked(mixed, s, packedEvent)
	}
	evs, err := wire.Unpack(mixed)
	if err != nil || len(evs) != len(subjects) {
		t.Fatalf("Unpack: %d events, %v", len(evs), err)
	}
	for i, s := range subjects {
		if evs[i].Subject != s {
			t.Errorf("event %d on %q, want %q", i, evs[i].Subject, s)
		}
	}
	if n := allocstest.PerRun(t, 100, func() { wire.Unpack(mixed) }); n != 5 {
		t.Errorf("a pack of 6 events on 4 runs of subjects allocates %v times; want 5", n)
	}
}
