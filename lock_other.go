//go:build !unix

package capdir

import "os"

// flock does nothing where flock(2) does not exist: the data dir is not locked.
func flock(*os.File) error { return nil }
