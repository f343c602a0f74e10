package dispatcher

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

func slotOf(s string) []byte {
	b := blankSlot
	copy(b[:], s)
	return b[:]
}

// A held file is read slot by slot: a record that does not decode, or that names
// no acknowledgement subject, sequence and time, is skipped and reported, never
// taken back; a torn last slot is ignored.
func TestParseHeldSkipsWhatIsNotARecord(t *testing.T) {
	good := `{"reply":"$JS.ACK.CAPDIR_DATA.capdir-dispatch.1.7.7.1796000000000000000.0","seq":7,"delivered":1,"since":"2026-12-01T12:00:00Z"}`
	cases := []struct {
		name string
		file []byte
		want int // records
		bad  int // reported
	}{
		{"empty", nil, 0, 0},
		{"blank slots", bytes.Repeat(blankSlot[:], 3), 0, 0},
		{"one record among blanks", append(append(slotOf(""), slotOf(good)...), slotOf("")...), 1, 0},
		{"not JSON", slotOf(`{"reply":`), 0, 1},
		{"binary", bytes.Repeat([]byte{0xff, 0, 0x7f}, heldSlotSize), 0, 3},
		{"another subject", slotOf(strings.Replace(good, "$JS.ACK.", "capdir.data.req.", 1)), 0, 1},
		{"a subject with a space", slotOf(strings.Replace(good, "capdir-dispatch", "capdir dispatch", 1)), 0, 1},
		{"no sequence", slotOf(strings.Replace(good, `"seq":7`, `"seq":0`, 1)), 0, 1},
		{"no time", slotOf(strings.Replace(good, `,"since":"2026-12-01T12:00:00Z"`, ``, 1)), 0, 1},
		{"torn last slot", append(slotOf(good), slotOf(good)[:100]...), 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := 0
			recs := parseHeld(c.file, func(int, string) { bad++ })
			if len(recs) != c.want || bad != c.bad {
				t.Fatalf("%d records, %d reported; want %d and %d", len(recs), bad, c.want, c.bad)
			}
			if c.want == 1 && (recs[0].Seq != 7 || recs[0].Delivered != 1 || !strings.HasPrefix(recs[0].Reply, ackPrefix)) {
				t.Fatalf("record %+v", recs[0])
			}
		})
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Opening a held file hands back what an earlier process left in it and blanks
// it for this one; a record written is read back by the next open, a blanked one
// is not, and a subject too long for a slot is not recorded.
func TestHeldFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dispatch-held")
	h, recs, err := openHeldFile(path, 4, quiet())
	if err != nil || len(recs) != 0 {
		t.Fatalf("first open: %v, %d records", err, len(recs))
	}
	since := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var buf [heldSlotSize]byte
	r := heldRecord{Reply: ackPrefix + "CAPDIR_DATA.capdir-dispatch.1.9.9.1.0", Seq: 9, Delivered: 1, Since: since}
	if !h.write(2, &r, &buf) {
		t.Fatal("not recorded")
	}
	r3 := r
	r3.Seq = 10
	h.write(3, &r3, &buf)
	h.blank(3)
	long := heldRecord{Reply: ackPrefix + strings.Repeat("x", heldSlotSize), Seq: 11, Since: since}
	if h.write(1, &long, &buf) {
		t.Fatal("a record longer than a slot was recorded")
	}
	h.close()
	if st, _ := os.Stat(path); st.Size() != 4*heldSlotSize {
		t.Fatalf("file of %d bytes; want 4 slots", st.Size())
	}
	h, recs, err = openHeldFile(path, 2, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if len(recs) != 1 || recs[0].Seq != 9 || !recs[0].Since.Equal(since) || recs[0].Reply != r.Reply {
		t.Fatalf("read back %+v; want the one record of slot 2", recs)
	}
	if _, recs, _ := openHeldFile(path, 2, quiet()); len(recs) != 0 {
		t.Fatalf("a second open read %d records; want none (the first open blanked the file)", len(recs))
	}
}

// A held file that cannot be written is removed, and nothing more is recorded: a
// record left unblanked must not be taken back at the next start.
func TestHeldFileRemovedWhenAWriteFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dispatch-held")
	h, _, err := openHeldFile(path, 2, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var buf [heldSlotSize]byte
	r := heldRecord{Reply: ackPrefix + "CAPDIR_DATA.capdir-dispatch.1.9.9.1.0", Seq: 9, Since: time.Now()}
	h.write(0, &r, &buf)
	h.f.Close() // every later write fails
	h.blank(0)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file is still there after a failed write: %v", err)
	}
	if h.write(1, &r, &buf) {
		t.Fatal("recorded after a failed write")
	}
}

// A held file path that cannot be a file fails the start, naming the file.
func TestHeldFileUnusablePath(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := openHeldFile(dir, 2, quiet()); err == nil || !strings.Contains(err.Error(), "held requests file") {
		t.Fatalf("open of a directory: %v", err)
	}
}

// What the held file costs a call: its record written before the run and blanked
// before the ack (two writes of one slot, no fsync).
func BenchmarkHeldFileRecordAndBlank(b *testing.B) {
	h, _, err := openHeldFile(filepath.Join(b.TempDir(), "dispatch-held"), 1, quiet())
	if err != nil {
		b.Fatal(err)
	}
	defer h.close()
	var buf [heldSlotSize]byte
	r := heldRecord{Reply: ackPrefix + "CAPDIR_DATA.capdir-dispatch.1.123456.123456.1796129146212154934.17", Seq: 123456, Delivered: 1, Since: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		if !h.write(0, &r, &buf) {
			b.Fatal("not recorded")
		}
		h.blank(0)
	}
}

// A held record is written as json.Marshal writes it, in the slot itself without
// an allocation, and read back; a subject that needs escaping, or a time
// encoding/json refuses, goes through encoding/json as before. A file written
// by json.Marshal's records reads the same.
func TestHeldRecordWrittenAsEncodingJSON(t *testing.T) {
	since := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("", 3600))
	recs := []heldRecord{
		{Reply: ackPrefix + "CAPDIR_DATA.capdir-dispatch.1.123456.123456.1796129146212154934.17", Seq: 123456, Delivered: 3, Since: since},
		{Reply: ackPrefix + "dom.hash.CAPDIR_DATA.capdir-dispatch.1.2.2.1796129146212154934.0.rnd", Seq: 2, Delivered: 1, Since: since.UTC()},
		{Reply: ackPrefix + "a<b>&\"\\\x01\u2028\xff", Seq: 1, Delivered: 1, Since: since},
		{Reply: ackPrefix + "x", Seq: 1, Delivered: 1, Since: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Reply: ackPrefix + "x", Seq: 1, Delivered: 1, Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
		{Reply: ackPrefix + "x", Seq: ^uint64(0), Delivered: ^uint64(0), Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -(23*3600+59*60)))},
	}
	for i, r := range recs {
		want, werr := json.Marshal(&r)
		var buf [heldSlotSize]byte
		got, ok := appendHeld(buf[:0], &r)
		if ok && (werr != nil || !bytes.Equal(got, want)) {
			t.Errorf("record %d: appendHeld %s; json.Marshal %s, %v", i, got, want, werr)
		}
		if !ok && i < 2 {
			t.Errorf("record %d: not written directly", i)
		}
	}
	path := filepath.Join(t.TempDir(), "dispatch-held")
	h, _, err := openHeldFile(path, 2, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var buf [heldSlotSize]byte
	if n := allocstest.PerRun(t, 100, func() { h.write(0, &recs[0], &buf) }); n != 0 {
		t.Errorf("a held record's write allocates %v times; want none", n)
	}
	if !h.write(1, &recs[2], &buf) {
		t.Fatal("a subject needing escapes was not recorded")
	}
	h.close()
	old, _ := json.Marshal(&recs[1]) // a record as json.Marshal wrote it
	b, _ := os.ReadFile(path)
	b = append(b, slotOf(string(old))...)
	got := parseHeld(b, func(slot int, why string) { t.Errorf("slot %d: %s", slot, why) })
	if len(got) != 3 {
		t.Fatalf("read back %d records; want 3", len(got))
	}
	for i, w := range []heldRecord{recs[0], {Reply: string(bytes.ToValidUTF8([]byte(recs[2].Reply), []byte("\ufffd"))), Seq: 1, Delivered: 1, Since: since}, recs[1]} {
		if got[i].Reply != w.Reply || got[i].Seq != w.Seq || got[i].Delivered != w.Delivered || !got[i].Since.Equal(w.Since) {
			t.Errorf("record %d read back %+v; want %+v", i, got[i], w)
		}
	}
}
