// Package keyfile reads a small secret file (a signing key, the owner key) the
// way ssh reads a private key: the file is opened once and checked through the
// open file, so what is checked is what is read. It must be a regular file (not
// a FIFO, which would block the reader, nor a device such as /dev/zero, which
// never ends), readable and writable by its owner only, and no larger than the
// caller's cap; it is read with that cap, so a file that grows while it is read
// is refused too.
package keyfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
)

var (
	// ErrNotRegular: the path names a directory, a FIFO, a device or a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file holds more than the caller's cap.
	ErrTooLarge = errors.New("larger than a key file may be")
)

// ModeError is a key file whose group or others may read or write it (never
// returned on Windows, whose modes are not Unix modes).
type ModeError struct {
	Path string
	Perm fs.FileMode
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("%s has mode %04o; a key file must be readable by its owner only: chmod 600 %s", e.Path, e.Perm, e.Path)
}

// OwnerError is a key file owned by another user than the one reading it (and
// not by root): that user may change it.
type OwnerError struct {
	Path     string
	UID, Own int
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%s is owned by uid %d; a key file must be owned by the user reading it (uid %d) or root: chown %d %s", e.Path, e.UID, e.Own, e.Own, e.Path)
}

// Read returns the content of the key file at path, of at most max bytes. A
// missing file is an error matching fs.ErrNotExist; a file that is not regular
// matches ErrNotRegular, one past max ErrTooLarge (both name the path); one its
// group or others may use is a *ModeError, one another user owns an *OwnerError.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (it is %s)", path, ErrNotRegular, kind(st.Mode()))
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, &ModeError{Path: path, Perm: perm}
	}
	if uid, ok := ownerOf(st); !ok {
		return nil, &OwnerError{Path: path, UID: uid, Own: os.Getuid()}
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, over %d", path, ErrTooLarge, st.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, max)
	}
	return b, nil
}

// kind names what a file that is not regular is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
