package projector_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/projector"
)

// A clean Close seals the file; a file changed after it is refused by an Open
// that has no log to rebuild it from, with a message naming the file and
// capdir replay, and is left as it is.
func TestOpenRefusesADamagedFileWithoutALog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	openAndClose(t, path, "open a new file")
	if _, err := os.Stat(path + ".sum"); err != nil {
		t.Fatalf("a clean close wrote no seal: %v", err)
	}
	openAndClose(t, path, "open a sealed, sound file")

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1 // a byte of a free page: harmless, but not what was closed
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = projector.Open(projector.Config{Path: path})
	var de *projector.DamagedError
	if !errors.As(err, &de) || !errors.Is(err, projector.ErrDamaged) || de.Path != path {
		t.Fatalf("open a changed file without a log: %v; want a *DamagedError for %s", err, path)
	}
	for _, want := range []string{path, "checksum", "xxh64:", "no log was given", "capdir replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, b) {
		t.Fatal("the refused file was changed")
	}
	if _, err := os.Stat(path + ".sum"); err != nil {
		t.Fatalf("the refused file's seal was removed: %v", err)
	}
}

// A seal is written with XXH64; a seal of SHA-256, as earlier versions wrote
// them, is checked as it was written: the file opens when it matches and is
// refused when a byte has changed since.
func TestSealsOfSHA256AreStillChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	openAndClose(t, path, "open a new file")
	seal, err := os.ReadFile(path + ".sum")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d xxh64:", len(b)); !strings.HasPrefix(string(seal), want) || len(seal) != len(want)+16+1 {
		t.Fatalf("seal %q; want %q and 16 hex digits, then a line feed", seal, want)
	}
	sealSHA256 := func(b []byte) {
		t.Helper()
		sum := sha256.Sum256(b)
		if err := os.WriteFile(path+".sum", fmt.Appendf(nil, "%d sha256:%s\n", len(b), hex.EncodeToString(sum[:])), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	sealSHA256(b)
	openAndClose(t, path, "open a file whose SHA-256 seal matches")

	b, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sealSHA256(b)
	changed := bytes.Clone(b)
	changed[len(changed)-1] ^= 1
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = projector.Open(projector.Config{Path: path})
	if !errors.Is(err, projector.ErrDamaged) || !strings.Contains(err.Error(), "sha256:") {
		t.Fatalf("open a file changed after its SHA-256 seal: %v; want it refused as damaged, naming its sha256 now", err)
	}
}

// openAndClose opens the projection at path without a log and closes it
// cleanly (which seals it); what says what a failure to open was.
func openAndClose(t *testing.T, path, what string) {
	t.Helper()
	p, err := projector.Open(projector.Config{Path: path})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
