package capdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/capdir/capdir/internal/keyfile"
)

// MaxKeyFileBytes caps an owner key file: a generated key is 65 bytes.
const MaxKeyFileBytes = 4 << 10

// ReadKeyFile reads the owner key stored at path (a data dir's terminal.key, or
// the file a client names with --key-file), without its surrounding white space.
// The file is opened once and checked through the open file: one its group or
// others may read is refused with ErrKeyFileMode (the message names the chmod),
// one that is not a regular file (a FIFO, a device, a directory) or holds more
// than MaxKeyFileBytes is refused naming the file, and an empty one is refused
// (a key file is never written in place, see writeNewKeyFile: an empty one was
// made so, or is being created on a filesystem without hard links, which
// TerminalKey waits a moment for, and is not taken for an empty key).
// A missing file is an error matching fs.ErrNotExist.
func ReadKeyFile(path string) (string, error) {
	b, err := keyfile.Read(path, MaxKeyFileBytes)
	var mode *keyfile.ModeError
	switch {
	case errors.As(err, &mode):
		return "", keyFileModeError(path, mode.Perm)
	case errors.Is(err, keyfile.ErrNotRegular), errors.Is(err, keyfile.ErrTooLarge):
		return "", fmt.Errorf("the owner key file %w; it must be a regular file holding the key alone", err)
	case err != nil:
		return "", err
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", &emptyKeyFileError{path: path}
	}
	return key, nil
}

// writeNewKeyFile writes key to a new file at path, mode 0600, atomically: the key
// goes whole into a temporary file in path's directory, synced, which is then
// linked to path. The link fails with fs.ErrExist when there is a file (or a
// link) at path already, which is never replaced; the temporary file is removed
// either way. A reader of path finds no file or the whole key, never an empty or
// a partial one, however many processes create it at once. On a filesystem
// without hard links the link fails otherwise, and path is claimed with an
// exclusive create instead (createKeyFileExcl): a reader may then find it empty
// for a moment, and waits for the key (readStoredKey).
func writeNewKeyFile(path, key string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	err = linkFile(f.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if xerr := createKeyFileExcl(f.Name(), path); xerr != nil {
		return fmt.Errorf("create %s: %w (a hard link to it failed first: %v)", path, xerr, err)
	}
	return nil
}
