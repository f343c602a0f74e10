// Package failure is the one shape of a failure a caller sees, and the tables
// that document each family of them.
//
// An *Error is a failure whose text is exactly what the caller reads (an
// "ERR:http:..." result, a gate's refusal, a 400's message): errors.Is matches its
// kind (a package's sentinel) and its cause. An Entry is one row of a package's
// failure table: the literal's pattern, what it means and what fixes it. A
// package builds each of its literals from its Entry (Entry.New), so the text a
// caller meets, the table the docs and the contract document print, and the test
// that drives the code into each failure all read one string.
//
// The package imports nothing of capdir: every layer (contract, the runners, the
// gate, the dispatcher, api) can use it.
package failure

import "errors"

// Error is a failure whose Error() is Literal, the text users see. errors.Is
// matches Kind (the sentinel the caller matches) and, through Unwrap, Cause (the
// underlying error, if any). It is a leaf: a walker of errors.Join trees takes
// its Literal whole.
type Error struct {
	Literal string
	Kind    error
	Cause   error
}

// New is a failure of kind whose text is literal.
func New(kind error, literal string) *Error { return &Error{Literal: literal, Kind: kind} }

// Wrap is New with the underlying error cause.
func Wrap(kind, cause error, literal string) *Error {
	return &Error{Literal: literal, Kind: kind, Cause: cause}
}

func (e *Error) Error() string { return e.Literal }

// Is reports whether Kind matches target.
func (e *Error) Is(target error) bool { return e.Kind != nil && errors.Is(e.Kind, target) }

// Unwrap is Cause.
func (e *Error) Unwrap() error { return e.Cause }

// LiteralOf is the text of the first *Error in err's chain; ok is false when there
// is none.
func LiteralOf(err error) (literal string, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Literal, true
	}
	return "", false
}
