package ask

import (
	"errors"
	"fmt"
)

// Sentinel errors of a query. Each is returned wrapped, with what to fix, by the
// functions below: the only place the words a caller reads are written.
var (
	// ErrEmpty: the ask holds nothing but spaces.
	ErrEmpty = errors.New("ask is empty")
	// ErrTooLong: the ask is longer than MaxAskBytes.
	ErrTooLong = errors.New("ask is too long")
	// ErrNoWords: every word of the ask is a stop word (or a single character).
	ErrNoWords = errors.New("ask has no word to search for")
	// ErrTooManyWords: the ask has more than MaxAskTerms distinct words to search for.
	ErrTooManyWords = errors.New("ask has too many words")
	// ErrBadLimit: a negative limit.
	ErrBadLimit = errors.New("bad limit")
)

func errEmpty() error {
	return fmt.Errorf("%w: say in plain words what the capability should do, e.g. ?ask=current+temperature+at+a+coordinate", ErrEmpty)
}

func errTooLong(n int) error {
	return fmt.Errorf("%w: %d bytes, at most %d: say it in fewer words", ErrTooLong, n, MaxAskBytes)
}

func errNoWords(text string) error {
	return fmt.Errorf("%w: %q holds only common words such as \"the\" or \"what\": name what the capability does or works on, e.g. temperature, invoice, models", ErrNoWords, text)
}

func errTooManyWords(n int) error {
	return fmt.Errorf("%w: %d distinct words, at most %d: keep the ones that say what the capability does", ErrTooManyWords, n, MaxAskTerms)
}

func errBadLimit(n int) error {
	return fmt.Errorf("%w: limit must be at least 1 (0 for the default, %d); got %d", ErrBadLimit, DefaultLimit, n)
}
