//go:build unix

package capdir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// flock takes an exclusive flock on f without waiting.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// openTo reports the permission bits of dir when group or others have any access
// to it; ok is false when they have none, or dir cannot be read.
func openTo(dir string) (perm fs.FileMode, ok bool) {
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm()&0o077 == 0 {
		return 0, false
	}
	return st.Mode().Perm(), true
}
