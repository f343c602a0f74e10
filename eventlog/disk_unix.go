//go:build unix

package eventlog

import "golang.org/x/sys/unix"

// freeBytes is the space left to an unprivileged writer on dir's file system.
func freeBytes(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
