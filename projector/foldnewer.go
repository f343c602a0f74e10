package projector

import (
	"errors"
	"fmt"
)

// ErrNewerFold is returned (inside a *NewerFoldError) by Open when a later
// version of capdir's fold built the projection (a downgrade): this fold cannot
// know what the later one folds differently, so it neither serves the file nor
// rebuilds it unasked.
var ErrNewerFold = errors.New("projector: the projection was built by a later version of the fold")

// NewerFoldError says which projection file a later fold built, and what to do.
// It matches ErrNewerFold. Open leaves the file as it found it.
type NewerFoldError struct {
	Path string
	// Have is the fold version that built the file, Want this version's (lower).
	Have, Want uint64
}

func (e *NewerFoldError) Error() string {
	return fmt.Sprintf("%s: %s was built by fold version %d, and this version of capdir folds version %d;"+
		" start the later capdir that built it, or, to stay on this version, stop capdir serve and run `capdir replay`"+
		" to rebuild the projection from the log with this version's fold (it replaces the file, and cannot bring back"+
		" events the log's retention removed: copy the file first to keep what the later fold built)",
		ErrNewerFold, e.Path, e.Have, e.Want)
}

// Unwrap makes a NewerFoldError match ErrNewerFold.
func (e *NewerFoldError) Unwrap() error { return ErrNewerFold }
