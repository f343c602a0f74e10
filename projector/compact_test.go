package projector_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/projector"
)

// Compact gives a projection a smaller file with the same answers and digest:
// receipts an older version stored as JSON in the compact encoding, pages full.
// The file opens sealed afterwards, and the projection folds on from it.
func TestCompactShrinksTheFileAndKeepsTheDigest(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 300)
	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	invs := []string{"inv_00000", "inv_00001", "inv_00150", "inv_00299"}
	want := receiptsJSON(t, p, invs)
	digest, _ := p.Digest()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := projector.StoreReceiptsAsJSON(path); err != nil {
		t.Fatal(err)
	}
	st, err := projector.Compact(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if st.After >= st.Before || st.After != fi.Size() {
		t.Fatalf("compact: %+v, the file has %d bytes", st, fi.Size())
	}
	if _, err := os.Stat(path + ".sum"); err != nil {
		t.Fatalf("the compacted file has no seal: %v", err)
	}
	if got, err := projector.FileDigest(path); err != nil || got != digest {
		t.Fatalf("digest after compact %s (%v), before %s", got, err, digest)
	}
	p2 := open(t, path, l)
	if got := receiptsJSON(t, p2, invs); !bytes.Equal(got, want) {
		t.Fatalf("receipts after compact\n%s\nbefore\n%s", got, want)
	}
	appendMix(t, l, 5)
	if err := runUntil(t, p2, l); err != nil {
		t.Fatal(err)
	}
	assertReplayDigest(t, l, p2)
}

// Compact refuses a damaged file and a missing one, and changes nothing.
func TestCompactRefusesADamagedFile(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 20)
	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	p.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = projector.Compact(path)
	var derr *projector.CompactDamagedError
	if !errors.As(err, &derr) || !errors.Is(err, projector.ErrDamaged) {
		t.Fatalf("compact of a damaged file: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("compact changed a damaged file")
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("compact left a copy behind: %v", err)
	}
	if _, err := projector.Compact(filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("compact of a missing file: %v", err)
	}
}
