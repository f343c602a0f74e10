//go:build unix

// Package keyfiletest makes the files a key file must not be, for the tests of
// every reader of one.
package keyfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SpecialFiles makes, under dir, each file a key file must not be, all of mode
// 0600 so that only what they are is wrong: a FIFO (which blocks a reader until a
// writer comes), a link to /dev/zero (which never ends), a directory, and a sparse
// file of 1 GiB. It returns each path with what a refusal of it says.
func SpecialFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	fifo := filepath.Join(dir, "fifo.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	files[fifo] = "not a regular file (it is a named pipe)"
	if _, err := os.Stat("/dev/zero"); err == nil {
		zero := filepath.Join(dir, "zero.key")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		files[zero] = "not a regular file (it is a character device)"
	}
	sub := filepath.Join(dir, "dir.key")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	files[sub] = "not a regular file (it is a directory)"
	huge := filepath.Join(dir, "huge.key")
	f, err := os.OpenFile(huge, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk is used
		t.Fatal(err)
	}
	files[huge] = "larger than a key file may be: 1073741824 bytes"
	return files
}
