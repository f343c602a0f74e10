package dispatcher

import "unicode/utf8"

// A receipt's body and result travel as JSON strings inside the event
// (wire.NewEvent encodes with encoding/json), and a string's encoding can be six
// times its length: encoding/json writes <, > and & as \u003c, \u003e and
// \u0026, control characters other than \b \f \n \r \t as \u00XX, U+2028 and
// U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8 as \ufffd. So the
// receipt is bounded by what its strings cost encoded, computed here without
// encoding them.

// jsonLen is the length of s as encoding/json writes it, without the quotes.
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		w, adv := jsonUnit(s[i:])
		n, i = n+w, i+adv
	}
	return n
}

// jsonUnit is the encoded length of the first character of s (a rune, or one
// byte of invalid UTF-8) and its length in s.
func jsonUnit(s string) (encoded, size int) {
	b := s[0]
	if b < utf8.RuneSelf {
		switch {
		case b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&':
			return 1, 1
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			return 2, 1
		}
		return 6, 1
	}
	c, size := utf8.DecodeRuneInString(s)
	if c == utf8.RuneError && size == 1 || c == '\u2028' || c == '\u2029' {
		return 6, size
	}
	return size, size
}

// truncMark ends a stored text that was cut.
const truncMark = "…[truncated]"

// truncate cuts s, on a character boundary, so that its encoding with the mark
// appended is at most n bytes, and returns it with its encoded length; s is
// returned whole when its encoding fits in n. One pass, no encoding allocated.
func truncate(s string, n int) (string, int) {
	keep := max(n-len(truncMark), 0) // the mark encodes as itself
	cut, cutLen, size := -1, 0, 0
	for i := 0; i < len(s); {
		w, adv := jsonUnit(s[i:])
		if cut < 0 && size+w > keep {
			cut, cutLen = i, size
		}
		if size+w > n {
			return s[:cut] + truncMark, cutLen + len(truncMark)
		}
		size, i = size+w, i+adv
	}
	return s, size
}
