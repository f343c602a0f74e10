package command

import (
	"errors"
	"fmt"
	"strings"

	imports "github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/eventlog"
)

// Sentinel errors of the command side. Every entry point matches them with
// errors.Is: the HTTP facade's one error table (package api) maps each to a status
// and a JSON body, the console shows the same literal.
var (
	// ErrBadRequest: a command is not usable as sent (a mint request, a token id,
	// a decision); the error's text says what to fix.
	ErrBadRequest = errors.New("bad request")
	// ErrPayloadTooLarge: an import row, or a row as the log would store it, is
	// over its limit; the error's text names the limit. Nothing is appended.
	ErrPayloadTooLarge = errors.New("payload_too_large")
	// ErrNotFound: the key (of a row) is not known.
	ErrNotFound = errors.New("not_found")
	// ErrExists: a create (POST, or an import row without upsert) names a key that
	// is present.
	ErrExists = errors.New("exists")
	// ErrConflict: another writer changed the key between a write's read and its
	// append; nothing was written. It is eventlog.ErrConflict.
	ErrConflict = eventlog.ErrConflict
	// ErrNotVisible: the event was appended but the projector did not apply it
	// within the write timeout. The write happened; a later read will show it.
	ErrNotVisible = errors.New("written to the log but not yet projected")
	// ErrUnavailable: the log or the projection could not be read or written.
	ErrUnavailable = errors.New("unavailable")
	// ErrNoDispatcher: an approval on a node that runs no dispatcher.
	ErrNoDispatcher = errors.New("dispatch is not running on this node")
)

// NewError is a failure.Error of kind (a sentinel) whose text is exactly format's,
// the text users see; %w in format wraps a cause, which errors.Is matches too.
func NewError(kind error, format string, args ...any) error {
	wrapped := fmt.Errorf(format, args...)
	return failure.Wrap(kind, errors.Unwrap(wrapped), wrapped.Error())
}

// badRequest is an ErrBadRequest whose text is msg.
func badRequest(msg string) error { return failure.New(ErrBadRequest, msg) }

// Unavailable is the ErrUnavailable of a directory whose log or projection failed.
func Unavailable(err error) error {
	return NewError(ErrUnavailable, "directory unavailable: %v", err)
}

// TooLarge is the payload_too_large error of a body or row of size bytes (size
// unknown when it is not over limit: the reader stopped at the limit).
func TooLarge(what string, size, limit int64) error {
	if size > limit {
		return fmt.Errorf("%w: %s is %d bytes; the limit is %d", ErrPayloadTooLarge, what, size, limit)
	}
	return fmt.Errorf("%w: %s is more than %d bytes; the limit is %d", ErrPayloadTooLarge, what, limit, limit)
}

// KeyError is an error of a Directory method about one key: errors.Is matches Err
// (ErrNotFound, ErrExists, ErrConflict, a contract sentinel, …).
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string {
	if e.Key == "" {
		return e.Err.Error()
	}
	return e.Key + ": " + e.Err.Error()
}

func (e *KeyError) Unwrap() error { return e.Err }

// WithKey wraps err (nil stays nil) in a *KeyError naming key, unless it names a
// key already.
func WithKey(key string, err error) error {
	if err == nil || errors.As(err, new(*KeyError)) {
		return err
	}
	return &KeyError{Key: key, Err: err}
}

// KeyOf is the key a directory error is about, "" when none.
func KeyOf(err error) string {
	var ke *KeyError
	if errors.As(err, &ke) {
		return ke.Key
	}
	return ""
}

// ImportIncompleteError is an import that wrote rows but ended in an error: the
// rows are not yet visible (ErrNotVisible), or the body stopped early (too large,
// stalled: the rows before that point were written). Result reports every row;
// the status is Err's.
type ImportIncompleteError struct {
	Result ImportResult
	Err    error
}

func (e *ImportIncompleteError) Error() string { return e.Err.Error() }
func (e *ImportIncompleteError) Unwrap() error { return e.Err }

// SpecImportIncompleteError is an import of a spec that wrote rows but ended in
// an error (the rows are not yet visible, or the listing of vanished rows or a
// prune failed). Report says what was written, in "error" the reason; the
// status is Err's.
type SpecImportIncompleteError struct {
	Report imports.SpecReport
	Err    error
}

func (e *SpecImportIncompleteError) Error() string { return e.Err.Error() }
func (e *SpecImportIncompleteError) Unwrap() error { return e.Err }

// ApprovalError is a failed approval lookup or decision about the invocation Inv:
// errors.Is matches Err's kind (dispatcher.ErrBadDecision, ErrApprovalUnknown,
// ErrApprovalDecided, ErrApprovalExpired, ErrApprovalRequestGone, or none: the
// approvals are unavailable).
type ApprovalError struct {
	Inv string
	Err error
}

func (e *ApprovalError) Error() string { return e.Err.Error() }
func (e *ApprovalError) Unwrap() error { return e.Err }

// Message is the text users see for a command's error: a hygiene refusal's
// literal, the "no recognized fields" literal, "not_found", the exists and
// conflict messages, or the error's own text. The problems of an errors.Join are
// joined with "; " on one line.
func Message(err error) string {
	var refusal *contract.RefusalError
	key := KeyOf(err)
	switch {
	case errors.As(err, &refusal):
		return refusal.Error()
	case errors.Is(err, contract.ErrNoRecognizedFields):
		return contract.ErrNoRecognizedFields.Error()
	case errors.Is(err, ErrNotFound) && key != "":
		return "not_found"
	case errors.Is(err, ErrExists) && key != "":
		return existsMessage(key)
	case errors.Is(err, ErrConflict) && key != "":
		return conflictMessage(key)
	}
	var ke *KeyError
	if errors.As(err, &ke) {
		err = ke.Err
	}
	return joinedText(err)
}

// joinedText renders an errors.Join tree on one line, its leaves separated by "; ".
func joinedText(err error) string {
	var parts []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		parts = append(parts, e.Error())
	}
	walk(err)
	return strings.Join(parts, "; ")
}

// The literal texts users see.

// existsMessage is a create's answer to a present key.
func existsMessage(key string) string {
	return fmt.Sprintf("exists: %s is already in the directory; PUT /api/directory/%s replaces it and PATCH changes some of its fields", key, key)
}

// importExistsMessage is an import row's failure on a present key.
func importExistsMessage(key string) string {
	return fmt.Sprintf("exists: %s is already in the directory (import with %s to replace it)", key, UpsertQuery)
}

// importRepeatedMessage is an import row's failure on a key an earlier row of the
// same import wrote.
func importRepeatedMessage(key string, at int) string {
	return fmt.Sprintf("exists: %s appears earlier in this import, at index %d (import with %s to let the later row replace it)", key, at, UpsertQuery)
}

// importOwnedMessage is an imported item's failure on a key held by a row the
// import did not make.
func importOwnedMessage(key string) string {
	return fmt.Sprintf("exists: the directory has a row %s that this import did not make; it is left as it is (import with another prefix, or delete that row first)", key)
}

// conflictMessage is the answer to a write another writer beat.
func conflictMessage(key string) string {
	return fmt.Sprintf("conflict: %s was changed by another writer between this request's read and its write; nothing was written; re-read the row and retry", key)
}
