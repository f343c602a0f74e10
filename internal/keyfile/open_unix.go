//go:build unix

package keyfile

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoBlock opens a FIFO without waiting for a writer, so that Read can refuse
// it instead of blocking; it changes nothing for a regular file.
const openNoBlock = syscall.O_NONBLOCK

// ownerOf is the uid owning the file st describes, and whether it may hold a
// key this process reads: its own user's, or root's (as ssh takes a private key).
func ownerOf(st fs.FileInfo) (uid int, ok bool) {
	sys, isStat := st.Sys().(*syscall.Stat_t)
	if !isStat {
		return -1, true
	}
	uid = int(sys.Uid)
	return uid, uid == os.Getuid() || uid == 0
}
