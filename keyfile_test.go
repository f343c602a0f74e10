package capdir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// The owner key in the data dir is refused, as ssh refuses a private key, when
// its group or others may read it; the refusal names the file, its mode and the
// chmod that fixes it, and never the key.
func TestTerminalKeyRefusesAFileOthersMayRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not Unix modes on Windows")
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o666} {
		dir := t.TempDir()
		path := capdir.KeyPath(dir)
		if err := os.WriteFile(path, []byte(nodetest.Key+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		key, _, _, err := capdir.TerminalKey("", dir)
		if !errors.Is(err, capdir.ErrKeyFileMode) {
			t.Fatalf("mode %04o: err = %v, want ErrKeyFileMode", mode, err)
		}
		if key != "" || strings.Contains(err.Error(), nodetest.Key) {
			t.Fatalf("mode %04o: the refusal gave the key away: %q %v", mode, key, err)
		}
		for _, want := range []string{path, "chmod 600 " + path, fmt.Sprintf("%04o", mode)} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("mode %04o: %q does not say %q", mode, err, want)
			}
		}
	}
}

// A key file of mode 0600 (or 0400) is read; one generated on first start is 0600.
func TestTerminalKeyReadsAFileOnlyItsOwnerMayRead(t *testing.T) {
	dir := t.TempDir()
	key, path, created, err := capdir.TerminalKey("", dir)
	if err != nil || !created {
		t.Fatalf("first start: %v created=%v", err, created)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated key file: %v %v", st.Mode(), err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	again, _, created, err := capdir.TerminalKey("", dir)
	if err != nil || created || again != key {
		t.Fatalf("second start: %q %v created=%v", again, err, created)
	}
	if _, _, _, err := capdir.TerminalKey("", filepath.Join(dir, "missing", "..")); err != nil {
		t.Fatalf("the same dir by another spelling: %v", err)
	}
}
