package capdir

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog"
)

// LockPath is the lock file of a data dir: whoever holds an flock on it owns the
// dir; it holds the owner's pid.
func LockPath(dataDir string) string { return filepath.Join(dataDir, "capdir.lock") }

// DataDirLock is a process's exclusive hold on a data dir. The operating system
// releases it when the process ends, however it ends; Unlock releases it before.
// The lock is per open file, so two nodes of one process conflict as two processes
// do. Unlock is idempotent.
type DataDirLock struct {
	mu sync.Mutex
	f  *os.File
}

// LockDataDir takes dataDir's lock without waiting and writes this process's pid in
// it. The dir must exist. When someone else holds it the error is a
// *DataDirInUseError (matching ErrDataDirInUse) naming the holder's pid.
func LockDataDir(dataDir string) (*DataDirLock, error) {
	path := LockPath(dataDir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("node: lock the data dir: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &DataDirInUseError{Dir: dataDir, PID: holderPID(path)}
		}
		return nil, fmt.Errorf("node: lock %s: %w", path, err)
	}
	// Write the pid over the old one, then cut what is left of a longer one: a
	// reader sees either pid on the first line, never an empty file.
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if _, err := f.WriteAt(pid, 0); err == nil {
		f.Truncate(int64(len(pid))) // the pid is only for the message
	}
	return &DataDirLock{f: f}, nil
}

// warnDataDirAccess warns when dataDir gives group or others any access: it holds
// the log (every call's arguments and results), the projection and the signing
// key, and a dir that already exists is used with the mode it has (a new one is
// made 0700).
func warnDataDirAccess(dataDir string, log *slog.Logger) {
	if perm, ok := openTo(dataDir); ok {
		log.Warn(fmt.Sprintf("node: data dir %s has mode %04o; it holds the log, the projection and the signing key, and should be accessible to its owner only: chmod 700 %s",
			dataDir, perm, dataDir), "dir", dataDir, "mode", fmt.Sprintf("%04o", perm))
	}
}

// Unlock releases the dir. The lock file stays: removing it would let two
// processes lock two different files of the same name.
func (l *DataDirLock) Unlock() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	return err
}

// holderPID reads the pid the holder of a lock file wrote, 0 when there is none.
// A holder that has just taken the lock may not have written it yet: it is read a
// few times over 50 ms.
func holderPID(path string) int {
	for range 10 {
		b, _ := os.ReadFile(path)
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(line))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

// LockExisting locks a data dir for a tool that works on what a node left there
// (capdir replay, capdir digest). The dir must hold a log: otherwise the error
// matches ErrNoLog, names the dir, and nothing is created. A dir a node holds is
// refused like LockDataDir refuses it.
func LockExisting(dataDir string) (*DataDirLock, error) {
	if fi, err := os.Stat(eventlog.StoreDir(dataDir)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w in %s: the data dir of a capdir server holds its log in %s; point --data (or $CAPDIR_DATA) at one, or start capdir serve --data %s to create it",
			ErrNoLog, dataDir, eventlog.StoreDir(dataDir), dataDir)
	}
	return LockDataDir(dataDir)
}

// CheckFree returns the *DataDirInUseError of a data dir a node holds now, else
// nil. It creates nothing; the answer may be stale by the time the caller acts, so
// Start still locks.
func CheckFree(dataDir string) error {
	f, err := os.OpenFile(LockPath(dataDir), os.O_RDWR, 0)
	if err != nil {
		return nil // no lock file: nobody ever held the dir (or it does not exist)
	}
	defer f.Close()
	if errors.Is(flock(f), errLocked) {
		return &DataDirInUseError{Dir: dataDir, PID: holderPID(LockPath(dataDir))}
	}
	return nil
}
