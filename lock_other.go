//go:build !unix

package capdir

import (
	"io/fs"
	"os"
)

// flock does nothing where flock(2) does not exist: the data dir is not locked.
func flock(*os.File) error { return nil }

// openTo reports nothing where permission bits do not say who may read a dir.
func openTo(string) (fs.FileMode, bool) { return 0, false }
