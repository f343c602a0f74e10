//go:build unix

package capdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/keyfile/keyfiletest"
)

// A terminal.key that is a FIFO, a link to /dev/zero, a directory or a file of
// 1 GiB is refused at once, naming the file and what it is, instead of blocking
// the start or reading without end; nothing replaces it.
func TestTerminalKeyRefusesASpecialOrHugeFile(t *testing.T) {
	for path, says := range keyfiletest.SpecialFiles(t, t.TempDir()) {
		dir := t.TempDir()
		if err := os.Rename(path, capdir.KeyPath(dir)); err != nil {
			t.Fatal(err)
		}
		key, _, created, err := capdir.TerminalKey("", dir)
		if err == nil || key != "" || created || !strings.Contains(err.Error(), capdir.KeyPath(dir)+": "+says) {
			t.Errorf("%s as terminal.key: %q created=%v %v; want it refused saying %q", filepath.Base(path), key, created, err, says)
		}
		if _, err := capdir.ReadKeyFile(capdir.KeyPath(dir)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: ReadKeyFile: %v", filepath.Base(path), err)
		}
	}
}

// A terminal.key that is a dangling link is not written through: the node
// creates the key only where there is no file and no link.
func TestTerminalKeyDoesNotWriteThroughALink(t *testing.T) {
	dir, elsewhere := t.TempDir(), filepath.Join(t.TempDir(), "planted")
	if err := os.Symlink(elsewhere, capdir.KeyPath(dir)); err != nil {
		t.Fatal(err)
	}
	if key, _, created, err := capdir.TerminalKey("", dir); err == nil || created || key != "" {
		t.Fatalf("a dangling link as terminal.key: %q created=%v %v; want it refused", key, created, err)
	}
	if _, err := os.Lstat(elsewhere); !os.IsNotExist(err) {
		t.Fatalf("the key was written through the link to %s: %v", elsewhere, err)
	}
}
