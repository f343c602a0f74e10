// Package visible shows text from untrusted sources (a row's content, a call's
// arguments, an upstream's answer) with every character that would act on the
// display instead of showing as itself written as an escape: the C0 controls
// but tab and newline, DEL, the C1 controls, the bidirectional formatting
// characters (embeddings, overrides, isolates and marks, which reorder what is
// shown around them), the invisible zero-width space, word joiner and byte
// order mark, and bytes that are not UTF-8. What a reader sees is then what the
// text holds: "1\u202e0000" cannot pass for another amount on an approval, and
// an escape sequence cannot clear a terminal.
package visible

import (
	"fmt"
	"unicode/utf8"
)

// Append appends b to dst with every such character escaped: a byte that is not
// UTF-8 as \xNN, a C0 control or DEL as \xNN (a carriage return as \r), any
// other as \uNNNN.
func Append(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			dst = fmt.Appendf(dst, `\x%02x`, b[0])
		case r == '\r':
			dst = append(dst, `\r`...)
		case (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case acts(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

// String is s with every such character escaped; s itself when it holds none.
func String(s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || acts(r) {
			return string(Append([]byte(s[:i]), []byte(s[i:])))
		}
		i += n
	}
	return s
}

// acts reports whether r, past ASCII, acts on the display: a C1 control, a
// bidirectional formatting character, or an invisible one that joins or hides
// text (not the zero-width joiner and non-joiner, which scripts and emoji need).
func acts(r rune) bool {
	switch {
	case 0x80 <= r && r <= 0x9f: // C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // the Arabic letter mark, LRM, RLM
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069: // embeddings, overrides, isolates
		return true
	case r == 0x200b, r == 0x2060, r == 0xfeff: // zero-width space, word joiner, BOM
		return true
	}
	return false
}
