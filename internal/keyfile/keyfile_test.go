//go:build unix

package keyfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/keyfile"
	"github.com/capdir/capdir/internal/keyfile/keyfiletest"
)

// A FIFO, a device, a directory and a file past the cap are refused at once,
// naming the file; a file its group or others may read is a *ModeError naming
// the chmod; a missing one matches fs.ErrNotExist; a file of mode 0600 or 0400
// of at most the cap is read whole.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	const max = 64
	for path, says := range keyfiletest.SpecialFiles(t, dir) {
		b, err := keyfile.Read(path, max)
		want := keyfile.ErrNotRegular
		if strings.HasPrefix(says, "larger") {
			want = keyfile.ErrTooLarge
		}
		if !errors.Is(err, want) || !strings.Contains(err.Error(), path+": "+says) || b != nil {
			t.Errorf("%s: %q, %v; want %v saying %q", filepath.Base(path), b, err, want, path+": "+says)
		}
	}
	loose := filepath.Join(dir, "loose.key")
	os.WriteFile(loose, []byte("k"), 0o600)
	os.Chmod(loose, 0o640)
	var mode *keyfile.ModeError
	if _, err := keyfile.Read(loose, max); !errors.As(err, &mode) || mode.Perm != 0o640 || !strings.Contains(err.Error(), "chmod 600 "+loose) {
		t.Errorf("mode 0640: %v; want a *ModeError saying chmod 600", err)
	}
	if _, err := keyfile.Read(filepath.Join(dir, "missing"), max); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	for _, perm := range []os.FileMode{0o600, 0o400} {
		good := filepath.Join(dir, "good"+perm.String())
		os.WriteFile(good, []byte(strings.Repeat("k", max)), 0o600)
		os.Chmod(good, perm)
		if b, err := keyfile.Read(good, max); err != nil || len(b) != max {
			t.Errorf("mode %04o, %d bytes: %d bytes, %v", perm, max, len(b), err)
		}
	}
}
