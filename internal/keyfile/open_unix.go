//go:build unix

package keyfile

import "syscall"

// openNoBlock opens a FIFO without waiting for a writer, so that Read can refuse
// it instead of blocking; it changes nothing for a regular file.
const openNoBlock = syscall.O_NONBLOCK
