//go:build !unix

package keyfile

// openNoBlock is 0 where opening a FIFO does not block on it.
const openNoBlock = 0
