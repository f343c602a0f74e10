// Package jsonenc writes JSON values byte for byte as encoding/json writes
// them, into a caller's buffer, for the hand-written encoders of the hot paths
// (eventlog/wire's event data, api/mcp's tool results).
package jsonenc

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string as json.Marshal writes it: quotes,
// backslashes and control characters escaped (\b \f \n \r \t by name), <, > and
// & as \u003c \u003e \u0026, U+2028 and U+2029 escaped, and each byte of invalid
// UTF-8 as \ufffd.
func AppendString(b []byte, s string) []byte { return appendString(b, s, true) }

// AppendStringNoHTML appends s as a JSON string as a json.Encoder with
// SetEscapeHTML(false) writes it: as AppendString, with <, > and & as they are.
func AppendStringNoHTML(b []byte, s string) []byte { return appendString(b, s, false) }

func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') { // DEL is written as is
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
