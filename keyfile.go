package capdir

import (
	"errors"
	"fmt"
	"os"
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
// than MaxKeyFileBytes is refused naming the file, and an empty one is refused.
// A missing file is an error matching fs.ErrNotExist.
func ReadKeyFile(path string) (string, error) {
	key, err := readOwnerKey(path)
	if err == nil && key == "" {
		return "", fmt.Errorf("the owner key file %s is empty", path)
	}
	return key, err
}

// readOwnerKey is ReadKeyFile but for an empty file, which reads as "".
func readOwnerKey(path string) (string, error) {
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
	return strings.TrimSpace(string(b)), nil
}

// writeNewKeyFile writes key to a new file at path, mode 0600; fs.ErrExist when
// there is a file (or a link) there already, which is never replaced.
func writeNewKeyFile(path, key string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
