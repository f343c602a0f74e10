package projector

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var (
	// ErrNotFound is returned by queries for a key or invocation that is not projected.
	ErrNotFound = errors.New("projector: not found")
	// ErrClosed is returned by operations on a closed projector.
	ErrClosed = errors.New("projector: closed")
	// ErrKilled is returned by a test hook to abandon a batch before it commits,
	// as a crash at that point would.
	ErrKilled = errors.New("projector: killed before commit")
	// ErrLogBehind is returned (inside a *LogBehindError) when the log no longer holds
	// what the projection has folded: a stream ends before the projection's
	// checkpoint, was deleted, or is not the stream the projection was built from.
	// Folding on would skip events without a word, so the projector stops.
	ErrLogBehind = errors.New("projector: the log is behind the projection")
	// ErrDamaged is returned (inside a *DamagedError) by Open when the projection
	// file is damaged (it does not match the checksum written when it was last
	// closed, bbolt finds it inconsistent, or a value does not match its own
	// checksum) and the log cannot rebuild all of it: serving from it, or from a
	// rebuild, would serve a shorter history. It is also returned by a read, and
	// from then on by the projector, when a value read while it runs does not
	// match its checksum: the next Open sets the file aside and rebuilds it.
	ErrDamaged = errors.New("projector: the projection is damaged")
	// ErrFoldVersion is returned (inside a *FoldVersionError) by Open when the
	// projection was built by another version of the fold (foldversion.go) and
	// the log's state, which says whether the log can rebuild it, could not be
	// read.
	ErrFoldVersion = errors.New("projector: the projection was built by another version of the fold")
	// ErrBeyondLog is returned (inside a *BeyondLogError) by the point-in-time
	// queries for a sequence the control stream has not reached.
	ErrBeyondLog = errors.New("projector: beyond the log")
	// ErrNoLog is returned by the queries that read the log (history, point in
	// time) from a projector opened without one.
	ErrNoLog = errors.New("projector: no log to read history from")
)

// BeyondLogError says how far the control stream goes. It matches ErrBeyondLog.
type BeyondLogError struct{ Seq, LastSeq uint64 }

func (e *BeyondLogError) Error() string {
	return fmt.Sprintf("at=%d is beyond the log: the control stream's last sequence is %d", e.Seq, e.LastSeq)
}

// Unwrap makes a BeyondLogError match ErrBeyondLog.
func (e *BeyondLogError) Unwrap() error { return ErrBeyondLog }

// DamagedError says which projection file is damaged, how, and what to do. It
// matches ErrDamaged.
type DamagedError struct {
	Path   string
	Reason string
	// Stream is a stream whose events before FirstSeq the log no longer holds
	// (retention removed them); empty when Open was given no log.
	Stream   string
	FirstSeq uint64
	// Running: the damage was found by a read while the projector ran, not by
	// Open. The file is left unsealed, for the next Open to find and rebuild.
	Running bool
}

func (e *DamagedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s", ErrDamaged, e.Path, e.Reason)
	if e.Running {
		b.WriteString(". capdir stops serving from this file; restart it: the start sets the file aside and rebuilds the projection from the log" +
			" (or, when the log no longer holds every event, refuses and names `capdir replay`)")
		return b.String()
	}
	if e.Stream != "" {
		fmt.Fprintf(&b, "; the log cannot rebuild all of it: stream %s holds events from sequence %d on (retention removed those before it)", e.Stream, e.FirstSeq)
	} else {
		b.WriteString("; no log was given to rebuild it from")
	}
	b.WriteString(". capdir will not serve from this file: it would serve a shorter history without a word." +
		" Restore the file from a backup, or stop capdir and run `capdir replay` to rebuild the projection from the log as it is" +
		" (without the events the log no longer holds)")
	return b.String()
}

// Unwrap makes a DamagedError match ErrDamaged.
func (e *DamagedError) Unwrap() error { return ErrDamaged }

// FoldVersionError says which projection file another version of the fold built
// and that the log could not say whether it can rebuild it (its state could not be
// read), and what to do. It matches ErrFoldVersion.
type FoldVersionError struct {
	Path string
	// Have is the fold version that built the file, Want this version's.
	Have, Want uint64
}

func (e *FoldVersionError) Error() string {
	return fmt.Sprintf("%s: %s was built by fold version %d, and this version of capdir folds version %d;"+
		" capdir rebuilds such a projection from the log when the log holds every event, and serves it as it is"+
		" when it does not, but could not read the log's state to tell which: start capdir again once the log"+
		" answers, or run `capdir replay` to rebuild the projection from the log", ErrFoldVersion, e.Path, e.Have, e.Want)
}

// Unwrap makes a FoldVersionError match ErrFoldVersion.
func (e *FoldVersionError) Unwrap() error { return ErrFoldVersion }

// LogBehindError says which stream no longer matches the projection and what to do.
// It matches ErrLogBehind.
type LogBehindError struct {
	Stream string
	// Checkpoint is the last sequence of Stream the projection has applied.
	Checkpoint uint64
	// LastSeq is the stream's last sequence in the log (0 when it is gone).
	LastSeq uint64
	// Gone: the stream does not exist any more.
	Gone bool
	// Folded is when the stream the projection was built from was created, Created
	// when the stream the log holds now was (both zero when not compared).
	Folded, Created time.Time
}

func (e *LogBehindError) Error() string {
	var b strings.Builder
	b.WriteString(ErrLogBehind.Error())
	switch {
	case e.Gone:
		fmt.Fprintf(&b, ": stream %s no longer exists, but the projection has applied it up to sequence %d", e.Stream, e.Checkpoint)
	case e.Checkpoint > e.LastSeq:
		fmt.Fprintf(&b, ": stream %s ends at sequence %d, but the projection has applied it up to sequence %d", e.Stream, e.LastSeq, e.Checkpoint)
	default:
		fmt.Fprintf(&b, ": stream %s is not the stream the projection was built from (the projection has applied up to sequence %d, the stream ends at %d)", e.Stream, e.Checkpoint, e.LastSeq)
	}
	if !e.Folded.IsZero() && !e.Created.IsZero() && !e.Folded.Equal(e.Created) {
		fmt.Fprintf(&b, "; the stream was created at %s, the projection's at %s (it was deleted and created again)",
			e.Created.UTC().Format(time.RFC3339Nano), e.Folded.UTC().Format(time.RFC3339Nano))
	}
	b.WriteString(". capdir will not serve from this projection: it would skip events without a word." +
		" If the log was lost or replaced, restore it and start again;" +
		" if the log as it is now is the one to keep, stop capdir and run `capdir replay` to rebuild the projection from it")
	return b.String()
}

// Unwrap makes a LogBehindError match ErrLogBehind.
func (e *LogBehindError) Unwrap() error { return ErrLogBehind }

// valueError is a stored value that does not match its checksum (sum.go). Its
// message names the bucket and the key, never the value.
type valueError struct {
	bucket, key string
}

func (e *valueError) Error() string {
	return fmt.Sprintf("the value stored under %q in bucket %s does not match its checksum", clip(e.key), e.bucket)
}

// Unwrap makes a valueError match errValueSum.
func (e *valueError) Unwrap() error { return errValueSum }

// skipError is an event the fold does not apply: it failed a fold-time check
// (check.go). It never leaves the package: apply logs it, counts it under its
// reason, and moves the checkpoint past the event. Its message names keys, types
// and subjects only, never an event's body, result or credential.
type skipError struct {
	reason string // a reason* label of capdir_projector_events_skipped_total
	msg    string
}

func (e *skipError) Error() string { return e.msg }

func skipf(reason, format string, args ...any) error {
	return &skipError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// skipReason is err's reason label: a skipError's, or reasonFoldError for an event
// that passed the checks and still could not be stored.
func skipReason(err error) string {
	var se *skipError
	if errors.As(err, &se) {
		return se.reason
	}
	return reasonFoldError
}

// ErrLedger is returned (wrapped) when the ledger's stored tree is incomplete:
// a hash or a leaf it should hold is missing.
var ErrLedger = errors.New("projector: the ledger's tree is incomplete")

// ErrLedgerSize is matched by a *LedgerSizeError.
var ErrLedgerSize = errors.New("projector: beyond the ledger")

// LedgerSizeError says a tree size (or leaf) asked for is beyond the ledger's
// size. It matches ErrLedgerSize.
type LedgerSizeError struct{ Asked, Size int64 }

func (e *LedgerSizeError) Error() string {
	return fmt.Sprintf("the ledger holds %d receipts; %d is beyond it", e.Size, e.Asked)
}

// Unwrap makes a LedgerSizeError match ErrLedgerSize.
func (e *LedgerSizeError) Unwrap() error { return ErrLedgerSize }

// CompactDamagedError is Compact's refusal of a damaged file. It matches
// ErrDamaged.
type CompactDamagedError struct{ Path, Reason string }

func (e *CompactDamagedError) Error() string {
	return fmt.Sprintf("%s: %s: %s. capdir compact copies a sound projection only, and left this one as it is:"+
		" start capdir serve, which sets it aside and rebuilds it from the log (or refuses and names `capdir replay` when the log no longer holds every event),"+
		" or stop capdir and run `capdir replay`", ErrDamaged, e.Path, e.Reason)
}

// Unwrap makes a CompactDamagedError match ErrDamaged.
func (e *CompactDamagedError) Unwrap() error { return ErrDamaged }
