package capdir

import (
	"errors"
	"fmt"
	"os"
)

var (
	// ErrDataDirInUse: another capdir process (or another node in this process)
	// holds the data dir. The concrete error is a *DataDirInUseError.
	ErrDataDirInUse = errors.New("data dir is in use")
	// ErrNoLog: a command that reads an existing data dir found no log in it.
	ErrNoLog = errors.New("no capdir log")
	// ErrNoProjection: the data dir has a log but no projection file.
	ErrNoProjection = errors.New("no projection")
	// ErrKeyFileMode: the data dir's terminal.key may be read by its group or by
	// others; the node does not start with it. The message names the chmod.
	ErrKeyFileMode = errors.New("the owner key file may be read by others")

	// errLocked: flock found the lock file locked through another open file.
	errLocked = errors.New("locked")
)

// DataDirInUseError says which process holds a data dir. Its message is
// "data dir D is in use by capdir (pid N)".
type DataDirInUseError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *DataDirInUseError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("data dir %s is in use by capdir (pid unknown)", e.Dir)
	}
	return fmt.Sprintf("data dir %s is in use by capdir (pid %d)", e.Dir, e.PID)
}

// Unwrap returns ErrDataDirInUse.
func (e *DataDirInUseError) Unwrap() error { return ErrDataDirInUse }

// keyFileModeError is ErrKeyFileMode for path, whose permissions are perm.
func keyFileModeError(path string, perm os.FileMode) error {
	return fmt.Errorf("%w: %s has mode %04o; the owner key must be readable by its owner only: chmod 600 %s (or set CAPDIR_TERMINAL_KEY)",
		ErrKeyFileMode, path, perm, path)
}
