//go:build !unix

package keyfile

import "io/fs"

// openNoBlock is 0 where opening a FIFO does not block on it.
const openNoBlock = 0

// ownerOf takes every file as its user's where ownership is not a Unix uid.
func ownerOf(fs.FileInfo) (uid int, ok bool) { return -1, true }
