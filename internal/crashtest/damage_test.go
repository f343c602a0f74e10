package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// fixture is what a node wrote before it was stopped: its data dir, the digest of
// its projection, the rows (key -> content) and the invocation ids.
type fixture struct {
	dir    string
	path   string // the projection file
	digest string
	rows   map[string]string
	invs   []string
}

const damageRows = 24

// valueMark is in one row's content only: a byte of it changed is a change inside a
// value that bbolt's check cannot see.
const valueMark = "zzvalue07"

// writeFixture writes rows (created, some replaced) and invocations through a node,
// then stops it cleanly.
func writeFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{dir: t.TempDir(), rows: map[string]string{}}
	f.path = capdir.ProjectionPath(f.dir)
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = f.dir })
	for i := range damageRows {
		key := fmt.Sprintf("D_%02d", i)
		content := fmt.Sprintf("# WHAT: damage test row %s, zzvalue%02d\n[\"$1\"]", key, i)
		method, path, want := "POST", "/api/directory", 201
		if i%4 == 3 { // created, then replaced
			if code, body := nodetest.Do(t, n, method, path, rowJSON(key, "# WHAT: first version\n[\"$1\"]")); code != want {
				t.Fatalf("POST %s: %d %s", key, code, body)
			}
			method, path, want = "PUT", "/api/directory/"+key, 200
		}
		if code, body := nodetest.Do(t, n, method, path, rowJSON(key, content)); code != want {
			t.Fatalf("%s %s: %d %s", method, key, code, body)
		}
		f.rows[key] = content
	}
	for i := range 10 {
		body := fmt.Sprintf(`{"key":"D_%02d","body":"call %d"}`, i, i)
		code, out := nodetest.Do(t, n, "POST", "/api/dispatch", body)
		var a dispatchAnswer
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil || a.Proof.InvocationID == "" {
			t.Fatalf("dispatch %s: %d %s", body, code, out)
		}
		f.invs = append(f.invs, a.Proof.InvocationID)
	}
	stopNode(t, n)
	var err error
	if f.digest, err = projector.FileDigest(f.path); err != nil {
		t.Fatal(err)
	}
	return f
}

// stopNode waits until n has folded its whole log, then stops it cleanly.
func stopNode(t *testing.T, n *capdir.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// logBuffer collects a node's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// restart starts a node on the fixture's data dir again; its log goes to logs.
func (f fixture) restart(t *testing.T, logs *logBuffer) *capdir.Node {
	t.Helper()
	return nodetest.Start(t, func(c *capdir.Config) {
		c.Log.DataDir = f.dir
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
}

// check asserts that n serves everything the fixture wrote, and that its
// projection, caught up, has the digest the fixture's had.
func (f fixture) check(t *testing.T, n *capdir.Node) {
	t.Helper()
	f.checkRows(t, n)
	for _, inv := range f.invs {
		if code, out := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, ""); code != 200 {
			t.Errorf("receipt %s: %d %s", inv, code, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	if d, err := n.Projector().Digest(); err != nil || d != f.digest {
		t.Errorf("digest %s (%v) after the restart; want %s, the digest before the damage", d, err, f.digest)
	}
}

// checkRows asserts that n serves every row the fixture wrote, as written last.
func (f fixture) checkRows(t *testing.T, n *capdir.Node) {
	t.Helper()
	for key, content := range f.rows {
		code, out := nodetest.Do(t, n, "GET", "/api/directory/"+key, "")
		var row struct {
			Content string `json:"content"`
		}
		if code != 200 || json.Unmarshal([]byte(out), &row) != nil || row.Content != content {
			t.Errorf("GET %s: %d %s; want content %q", key, code, out, content)
		}
	}
}

// pageSize is the projection file's page size.
func pageSize(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Info().PageSize
}

// usedSize is the size of the pages the file's meta page counts (the file may be
// longer).
func usedSize(t *testing.T, path string) (n int64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// edit applies fn to the file's bytes.
func edit(t *testing.T, path string, fn func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// flip inverts n bytes at off.
func flip(b []byte, off, n int) {
	for i := off; i < off+n; i++ {
		b[i] ^= 0xff
	}
}

// marks are the offsets of every copy of valueMark in the file (the live row and
// any stale copy in a free page).
func marks(t *testing.T, b []byte) []int {
	t.Helper()
	var out []int
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(valueMark))
		if j < 0 {
			break
		}
		out = append(out, i+j)
		i += j + 1
	}
	if len(out) == 0 {
		t.Fatalf("%s is not in the projection file", valueMark)
	}
	return out
}

// A damage done to the projection file of a stopped node.
type damageCase struct {
	name   string
	damage func(t *testing.T, path string)
	// setAside: the damage is detected, the file set aside as .corrupt and the
	// projection rebuilt from the log.
	setAside bool
}

var (
	deleted = func(t *testing.T, path string) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	// truncatedToHalf cuts the file to half the pages its meta page counts.
	truncatedToHalf = func(t *testing.T, path string) {
		if err := os.Truncate(path, usedSize(t, path)/2); err != nil {
			t.Fatal(err)
		}
	}
	truncatedByAPage = func(t *testing.T, path string) {
		ps := pageSize(t, path)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()-int64(ps)); err != nil {
			t.Fatal(err)
		}
	}
	metaFlipped = func(metas ...int) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			ps := pageSize(t, path)
			edit(t, path, func(b []byte) []byte {
				for _, m := range metas {
					flip(b, m*ps+16+16, 8) // the meta's root bucket page id
				}
				return b
			})
		}
	}
	// pageFlipped inverts the header (type flags and element count) of every page
	// holding valueMark: bbolt's check finds the live one.
	pageFlipped = func(t *testing.T, path string) {
		ps := pageSize(t, path)
		edit(t, path, func(b []byte) []byte {
			for _, off := range marks(t, b) {
				flip(b, off/ps*ps+8, 4)
			}
			return b
		})
	}
	// valueFlipped changes one letter of valueMark in every copy: the row's JSON
	// stays well formed, and bbolt's check sees nothing.
	valueFlipped = func(t *testing.T, path string) {
		edit(t, path, func(b []byte) []byte {
			for _, off := range marks(t, b) {
				b[off] = 'y'
			}
			return b
		})
	}
)

// The projection file of a node stopped cleanly is damaged, and the node started
// again: whatever the damage, it serves every row and receipt it wrote before, and
// its digest is the one it had. A damaged file is set aside (.corrupt) with a
// warning naming it and the projection rebuilt from the log; the clean stop's seal
// (size and SHA-256) finds every damage before bbolt reads the file, a byte changed
// inside a row's JSON too, which bbolt's check cannot find.
func TestDamagedProjectionAfterACleanStop(t *testing.T) {
	for _, c := range []damageCase{
		{"untouched", func(*testing.T, string) {}, false},
		{"deleted", deleted, false},
		{"truncated to half", truncatedToHalf, true},
		{"truncated by a page", truncatedByAPage, true},
		{"meta page 0 flipped", metaFlipped(0), true},
		{"both meta pages flipped", metaFlipped(0, 1), true},
		{"data page header flipped", pageFlipped, true},
		{"a byte inside a row's JSON", valueFlipped, true},
	} {
		t.Run(c.name, func(t *testing.T) { damageAndRestart(t, c, false) })
	}
}

// The same after an unclean stop (the marker a running projection leaves is there,
// and no seal): bbolt's own checks (meta pages, the file's length against its
// pages, the consistency check) and every value's own checksum find the damage
// before the file is served.
func TestDamagedProjectionAfterAnUncleanStop(t *testing.T) {
	for _, c := range []damageCase{
		{"untouched", func(*testing.T, string) {}, false},
		{"deleted", deleted, false},
		{"truncated to half", truncatedToHalf, true},
		{"both meta pages flipped", metaFlipped(0, 1), true},
		{"data page header flipped", pageFlipped, true},
		{"a byte inside a row's JSON", valueFlipped, true},
	} {
		t.Run(c.name, func(t *testing.T) { damageAndRestart(t, c, true) })
	}
}

func damageAndRestart(t *testing.T, c damageCase, unclean bool) {
	f := writeFixture(t)
	if unclean {
		if err := os.WriteFile(f.path+".open", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(f.path + ".sum"); err != nil {
			t.Fatalf("a clean stop left no seal: %v", err)
		}
	}
	c.damage(t, f.path)
	var logs logBuffer
	n := f.restart(t, &logs)
	f.check(t, n)
	_, err := os.Stat(f.path + ".corrupt")
	warned := strings.Contains(logs.String(), "projection damaged") && strings.Contains(logs.String(), f.path)
	switch {
	case c.setAside && (err != nil || !warned):
		t.Errorf("the damaged file was not set aside with a warning (%v); log:\n%s", err, logs.String())
	case !c.setAside && (err == nil || warned):
		t.Errorf("a sound file was set aside; log:\n%s", logs.String())
	}
}

// A value changed in the projection file while the node runs (bbolt maps the
// file, so a write to it shows in every later read) is not served: the read that
// meets it answers 503, the node reports the damage and stops serving from the
// file, its stop leaves the file unsealed, and the next start sets it aside and
// rebuilds it from the log.
func TestDamagedValueReadWhileTheNodeRuns(t *testing.T) {
	f := writeFixture(t)
	var logs logBuffer
	n := f.restart(t, &logs)
	key := "D_07" // its content holds valueMark
	if code, out := nodetest.Do(t, n, "GET", "/api/directory/"+key, ""); code != 200 || !strings.Contains(out, valueMark) {
		t.Fatalf("GET %s before the damage: %d %s", key, code, out)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(f.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range marks(t, b) {
		if _, err := w.WriteAt([]byte{'y'}, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	code, out := nodetest.Do(t, n, "GET", "/api/directory/"+key, "")
	if code != 503 || strings.Contains(out, "yzvalue07") || !strings.Contains(out, "does not match its checksum") {
		t.Fatalf("GET %s after the damage: %d %s; want 503 saying the value does not match its checksum", key, code, out)
	}
	select {
	case err := <-n.Failed():
		if !errors.Is(err, projector.ErrDamaged) {
			t.Fatalf("the node failed with %v; want ErrDamaged", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not report the damage")
	}
	if code, out := nodetest.Do(t, n, "GET", "/api/directory/"+key, ""); code == 200 {
		t.Fatalf("GET %s once the damage is known: %d %s", key, code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n.Stop(ctx)
	if _, err := os.Stat(f.path + ".sum"); err == nil {
		t.Fatal("the stop sealed a file known to be damaged")
	}

	var again logBuffer
	n = f.restart(t, &again)
	f.check(t, n)
	if _, err := os.Stat(f.path + ".corrupt"); err != nil || !strings.Contains(again.String(), "does not match its checksum") {
		t.Errorf("the damaged file was not set aside with a warning (%v); log:\n%s", err, again.String())
	}
}

// When the log no longer holds every event (retention removed old requests and
// receipts), a rebuild would serve a shorter history: a damaged projection is then
// refused, with a message naming the file and capdir replay, and left as it is.
// Rebuilding it from the log as it is (capdir replay) lets the node start.
func TestDamagedProjectionRefusedWhenTheLogCannotRebuildIt(t *testing.T) {
	f := writeFixture(t)
	l := logtest.Open(t, f.dir)
	ctx := context.Background()
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSequence(3)); err != nil { // as retention would
		t.Fatal(err)
	}
	l.Close()
	valueFlipped(t, f.path)
	damaged, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}

	n, err := capdir.Start(ctx, capdir.Config{TerminalKey: nodetest.Key, Log: eventlog.Config{DataDir: f.dir}}, capdir.WithLogger(slog.New(slog.DiscardHandler)))
	if err == nil {
		n.Stop(ctx)
	}
	if !errors.Is(err, projector.ErrDamaged) {
		t.Fatalf("start on a damaged projection the log cannot rebuild: %v; want ErrDamaged", err)
	}
	for _, want := range []string{f.path, "size and checksum", wire.DataStream, "from sequence 3", "will not serve", "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	if now, rerr := os.ReadFile(f.path); rerr != nil || !bytes.Equal(now, damaged) {
		t.Fatalf("the refused file was changed or moved: %v", rerr)
	}

	l = logtest.Open(t, f.dir)
	if err := projector.Rebuild(ctx, projector.Config{Path: f.path, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	f.checkRows(t, f.restart(t, &logBuffer{}))
}
