package contract

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of these, so callers
// (the HTTP facade, the CLI) choose a status code with errors.Is and show err.Error()
// to the user unchanged.
var (
	// ErrMalformedJSON: the body is not one well-formed JSON object.
	ErrMalformedJSON = errors.New("malformed JSON")
	// ErrUnknownField: the body names a field that is not a directory column.
	ErrUnknownField = errors.New("unknown field")
	// ErrWrongType: a field holds a JSON value of the wrong type.
	ErrWrongType = errors.New("wrong type")
	// ErrRequired: a required field (key, type) is absent or empty.
	ErrRequired = errors.New("required")
	// ErrInvalid: a field has the right JSON type but an illegal value.
	ErrInvalid = errors.New("invalid value")
	// ErrKeyMismatch: a PUT body names a key different from the path key.
	ErrKeyMismatch = errors.New("key mismatch")
	// ErrNoRecognizedFields: a PATCH body names no field on PatchAllowList.
	// Its message is the documented literal: {"error":"no recognized fields"}.
	ErrNoRecognizedFields = errors.New("no recognized fields")
	// ErrHygieneRefused: a write was refused by the registry hygiene gate.
	// The concrete error is a *RefusalError.
	ErrHygieneRefused = errors.New("registry_hygiene_refused")
	// ErrInput: a call's arguments do not satisfy the row's input_schema (see
	// Signature). The concrete error is an *InputError.
	ErrInput = errors.New("input")
)

// ValidationError is one problem with one field. Decoding, validation and the write
// operations return these, several joined with errors.Join when there is more than
// one problem. Match one with errors.As; match its kind with errors.Is against
// ErrUnknownField, ErrWrongType, ErrRequired, ErrInvalid or ErrKeyMismatch.
type ValidationError struct {
	Field   string // the JSON field name, e.g. "enabled"
	Problem string // what is wrong and what to write instead
	Err     error  // the sentinel kind; nil means ErrInvalid
}

// Error renders "<field>: <problem>".
func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s", e.Field, e.Problem)
}

// Unwrap returns the sentinel kind.
func (e *ValidationError) Unwrap() error {
	if e.Err == nil {
		return ErrInvalid
	}
	return e.Err
}

func fieldErr(kind error, field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...), Err: kind}
}
