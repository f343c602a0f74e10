package capdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// linkFile links a new key file into place (writeNewKeyFile); a test stands in
// a filesystem without hard links.
var linkFile = os.Link

// createKeyFileExcl puts the key file written whole at tmp in place at path on a
// filesystem without hard links: path is created empty with O_EXCL (mode 0600;
// it fails with fs.ErrExist when there is a file or a link there, which is
// never replaced nor written through), so that one creator alone claims it, and
// tmp is then renamed over that empty file, which only its creator replaces, and
// the directory synced. A reader finds no file, an empty one for a moment, or
// the whole key, never a partial one. A crash between the two leaves path
// empty, which the next start refuses naming the file (remove it to have a new
// key generated).
func createKeyFileExcl(tmp, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(path)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// emptyKeyFileError is ReadKeyFile's refusal of an empty key file.
type emptyKeyFileError struct{ path string }

func (e *emptyKeyFileError) Error() string {
	return fmt.Sprintf("the owner key file %s is empty; write the owner key into it, or remove it to have a new key generated at the next start", e.path)
}

// How long readStoredKey waits for an empty key file to get its key: far longer
// than another creator takes between its exclusive create and its rename.
const (
	keyFileWaitStep = 20 * time.Millisecond
	keyFileWaits    = 100
)

// keyFileWait is one pause of readStoredKey; a test stands in the creator that
// puts the key in place meanwhile.
var keyFileWait = sleepKeyFileWait

func sleepKeyFileWait() { time.Sleep(keyFileWaitStep) }

// readStoredKey reads the key file at path as ReadKeyFile does, and, finding it
// empty, reads it again for a while (up to keyFileWaits pauses) before refusing
// it: another process creating it on a filesystem without hard links
// (createKeyFileExcl) has it empty until it renames the key into place.
func readStoredKey(path string) (string, error) {
	for i := 0; ; i++ {
		key, err := ReadKeyFile(path)
		var empty *emptyKeyFileError
		if !errors.As(err, &empty) || i == keyFileWaits {
			return key, err
		}
		keyFileWait()
	}
}
