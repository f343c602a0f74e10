package dispatcher

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/eventlog"
)

// A call cut by a crash of its node has no receipt and must run again. On a log
// no other node shares, the next start resets the consumer (reclaim). On a shared
// log the requests an earlier process held cannot be told apart, by the consumer,
// from the calls other nodes are running, so each worker writes down, in the held
// file of its data dir, the request it holds before it runs it, and blanks the
// record before the request is acknowledged, handed back or terminated. At the
// next start the node takes back the requests its file names, and runs them after
// the usual look for their receipt (handle), instead of leaving them to JetStream's
// redelivery after the ack wait.
//
// Taking a request back must not make two workers run it. JetStream hands a
// delivery to another worker only once its ack wait has passed without word, and
// only the consumer's leader does. So a request is taken back only when
//   - the consumer's leader has led it since before the record's Since (a time no
//     later than the one its ack wait began at: the request's store time, or when
//     a confirmed claim was sent), so that leader holds the delivery as pending;
//   - a progress (+WPI) sent to the delivery's acknowledgement subject as a
//     request is answered, the answer coming before that ack wait can have ended,
//     clocks apart by electedSkew: the leader then restarted the ack wait for it;
//   - the same leader, elected at the same time, still leads after the answer.
//
// The request is then the restarted node's exactly as it was the dead one's: the
// worker keeps it in progress and acknowledges it on the same subject. Anything
// else (no record, a record too old, an election since, no answer) leaves the
// request to the ack wait, as without the file. A lost record is never a double
// run, only a wait: the file is written without fsync, since a killed process's
// writes survive in the page cache, and a machine that lost its page cache
// restarts long after the ack wait.

// heldSlotSize is the room of one worker's record in the held file: a JSON object,
// padded with spaces, ending in a newline; a slot of spaces is blank.
const heldSlotSize = 512

// maxHeldFile bounds what is read of a held file.
const maxHeldFile = 16 << 20

// heldRecord is what the held file keeps of one request a worker holds.
type heldRecord struct {
	// Reply is the delivery's acknowledgement subject: an ack, a nak or a
	// progress sent there concerns the delivery, whichever connection sends it.
	Reply string `json:"reply"`
	// Seq is the request's data stream sequence, Delivered how many times
	// JetStream had delivered it.
	Seq       uint64 `json:"seq"`
	Delivered uint64 `json:"delivered"`
	// Since is no later than the time JetStream began the delivery's ack wait.
	Since time.Time `json:"since"`
}

// heldFile is the held file of a running service: one slot per worker.
type heldFile struct {
	f      *os.File
	path   string
	logger *slog.Logger
	off    atomic.Bool // a write failed: nothing more is recorded
}

// openHeldFile reads the records an earlier process left in path, then makes path
// a file of slots blank slots for this process.
func openHeldFile(path string, slots int, logger *slog.Logger) (*heldFile, []heldRecord, error) {
	old, err := readHeld(path)
	if err != nil {
		return nil, nil, err
	}
	recs := parseHeld(old, func(slot int, why string) {
		logger.Warn("dispatcher: a record of the held requests file is not usable; its request is left to the ack wait", "file", path, "slot", slot, "why", why)
	})
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("dispatcher: held requests file: %w", err)
	}
	if _, err := f.WriteAt(bytes.Repeat(blankSlot[:], slots), 0); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("dispatcher: held requests file: %w", err)
	}
	return &heldFile{f: f, path: path, logger: logger}, recs, nil
}

func readHeld(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dispatcher: held requests file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHeldFile))
	if err != nil {
		return nil, fmt.Errorf("dispatcher: held requests file: %w", err)
	}
	return b, nil
}

// parseHeld reads the records of a held file; a record that does not decode, or
// names no acknowledgement subject, is reported to bad and skipped.
func parseHeld(b []byte, bad func(slot int, why string)) []heldRecord {
	var recs []heldRecord
	for i := 0; (i+1)*heldSlotSize <= len(b); i++ {
		s := bytes.TrimSpace(b[i*heldSlotSize : (i+1)*heldSlotSize])
		if len(s) == 0 {
			continue
		}
		var r heldRecord
		switch err := json.Unmarshal(s, &r); {
		case err != nil:
			bad(i, err.Error())
		case !strings.HasPrefix(r.Reply, ackPrefix) || strings.ContainsAny(r.Reply, " \t\r\n") || r.Seq == 0 || r.Since.IsZero():
			bad(i, "not a delivery's acknowledgement subject, sequence and time")
		default:
			recs = append(recs, r)
		}
	}
	return recs
}

// ackPrefix begins every JetStream acknowledgement subject.
const ackPrefix = "$JS.ACK."

var blankSlot = func() (b [heldSlotSize]byte) {
	for i := range b {
		b[i] = ' '
	}
	b[heldSlotSize-1] = '\n'
	return b
}()

// write puts r in slot i (buf is the slot's own buffer), and reports whether it
// is there.
func (h *heldFile) write(i int, r *heldRecord, buf *[heldSlotSize]byte) bool {
	if h.off.Load() {
		return false
	}
	*buf = blankSlot
	// Written in the slot itself; a record it does not hold, or not written
	// there, blanks the slot again.
	if j, ok := appendHeld(buf[:0], r); !ok || len(j) >= heldSlotSize {
		*buf = blankSlot
		if ok {
			return false // a subject this long is left to the ack wait
		}
		j, err := json.Marshal(r)
		if err != nil || len(j) >= heldSlotSize {
			return false
		}
		copy(buf[:], j)
	}
	return h.put(i, buf)
}

// blank empties slot i.
func (h *heldFile) blank(i int) {
	b := blankSlot
	h.put(i, &b)
}

func (h *heldFile) put(i int, b *[heldSlotSize]byte) bool {
	if _, err := h.f.WriteAt(b[:], int64(i)*heldSlotSize); err != nil {
		// A record that cannot be blanked must not be taken back at the next
		// start: the file goes, and nothing more is recorded.
		if h.off.CompareAndSwap(false, true) {
			h.logger.Error("dispatcher: the held requests file cannot be written; removed, and a crash's calls are left to the ack wait", "file", h.path, "err", err)
			os.Remove(h.path)
		}
		return false
	}
	return true
}

func (h *heldFile) close() error { return h.f.Close() }

// trackedMsg is a request whose record is in the held file: the record is
// blanked before anything ends the delivery, so that a crash after the end
// takes nothing back.
type trackedMsg struct {
	eventlog.Msg
	slot *heldSlot
}

func (m trackedMsg) Ack() error {
	m.slot.forget()
	return m.Msg.Ack()
}

func (m trackedMsg) Nak() error {
	m.slot.forget()
	return m.Msg.Nak()
}

func (m trackedMsg) NakWithDelay(d time.Duration) error {
	m.slot.forget()
	return m.Msg.NakWithDelay(d)
}

func (m trackedMsg) Term() error {
	m.slot.forget()
	return m.Msg.Term()
}

// HeldPath is the held file of the node whose data dir is dataDir
// (ServiceConfig.HeldFile).
func HeldPath(dataDir string) string { return filepath.Join(dataDir, "dispatch-held") }

// recordsHeld is the held file the workers record their requests in: none on a
// log no other node shares. There a restart resets the consumer instead (reclaim),
// and takeBack reads no record, so a record would be two writes a call for
// nothing. The file is still opened at the start, which empties it of what an
// earlier process on a shared log left. A log that becomes shared (a node
// admitted) after a crash of a process that recorded nothing has no record of
// that crash's calls: they wait for the ack wait, as without the file, and are
// never run twice.
func (s *Service) recordsHeld() *heldFile {
	if !s.sharedLog {
		return nil
	}
	return s.heldFile
}

// appendHeld appends r as json.Marshal writes it, when its subject needs no
// escaping (a subject JetStream makes), or reports false.
func appendHeld(b []byte, r *heldRecord) ([]byte, bool) {
	for i := 0; i < len(r.Reply); i++ {
		if c := r.Reply[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, `{"reply":"`...)
	b = append(b, r.Reply...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"delivered":`...)
	b = strconv.AppendUint(b, r.Delivered, 10)
	b = append(b, `,"since":"`...)
	at := len(b)
	b = r.Since.AppendFormat(b, time.RFC3339Nano)
	if t := b[at:]; len(t) < len("2006-01-02T15:04:05Z") || t[4] != '-' || (t[len(t)-1] != 'Z' && 10*(t[len(t)-5]-'0')+(t[len(t)-4]-'0') >= 24) {
		return b, false // a time time.Time.MarshalJSON refuses
	}
	return append(b, `"}`...), true
}
