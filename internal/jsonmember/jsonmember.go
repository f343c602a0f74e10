// Package jsonmember reads the members of a JSON object in the form capdir
// writes by hand (one object, member names of printable ASCII without escapes)
// for the decoders that read a few fields of an event's data without the
// general decoder: each member's name and its value as written, the value
// skipped by its brackets and quotes alone. Its callers read data already
// checked to be valid JSON, and give up, for the general decoder to decide, on
// whatever they do not read exactly as it would (see Fields).
package jsonmember

import (
	"bytes"
	"strconv"
	"strings"
)

// Fields calls set with each member of the JSON object data, its name and its
// value as written; set reads the members named exactly one of names, saying
// which (its index in names, at most 31) and whether it could, and returns -1
// for any other. Fields reports whether data was such an object and set read
// each of its fields, given once: it gives up on a field given twice, and on a
// member named one of names in another case (the general decoder matches names
// regardless of case); it skips every other member.
func Fields(data []byte, names []string, set func(name, v []byte) (field int, ok bool)) bool {
	var seen uint32
	return Each(data, func(name, v []byte) bool {
		field, ok := set(name, v)
		if field < 0 {
			return !foldsToField(name, names)
		}
		if !ok || seen&(1<<field) != 0 {
			return false
		}
		seen |= 1 << field
		return true
	})
}

// foldsToField reports whether name, which is none of names exactly, is one of
// them in another case: the general decoder would take it for that field.
func foldsToField(name []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(name) && equalFoldASCII(name, n) {
			return true
		}
	}
	return false
}

func equalFoldASCII(b []byte, s string) bool {
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// Text is the text of v, a JSON string of printable ASCII without escapes, as
// it is written (its quotes cut off); ok is false for any other value.
func Text(v []byte) (text []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	v = v[1 : len(v)-1]
	return v, Plain(v)
}

// Plain reports whether b is printable ASCII without a quote or a backslash:
// the text of a JSON string that has no escape, as it is written.
func Plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// Uint is v, a JSON number of at most 19 plain digits (no sign, fraction or
// exponent; no leading zero but 0 itself).
func Uint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 19 || (v[0] == '0' && len(v) > 1) {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// Each calls fn with each member of the JSON object data, its name (of
// printable ASCII, without escapes) and its value as written, in order, until fn
// returns false. It reports whether data was such an object and fn took every
// member. data must be valid JSON: a value is skipped by its brackets and quotes
// alone.
func Each(data []byte, fn func(name, v []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if c := data[j]; c < 0x20 || c >= 0x7f || c == '\\' {
				return false
			}
			j++
		}
		if j >= len(data) {
			return false
		}
		name := data[i+1 : j]
		i = skipSpace(data, j+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		end := skipValue(data, i)
		if end < 0 || !fn(name, data[i:end]) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipValue is the index just past the JSON value starting at data[i], or -1.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				if j = skipString(data, j); j < 0 {
					return -1
				}
				j-- // the loop's j++ lands just past the string
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
	scan:
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				break scan
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// skipString is the index just past the JSON string starting at data[i], or -1:
// its closing quote is the first quote after an even run of backslashes (none
// included).
func skipString(data []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		run := 0
		for p := q - 1; p > i && data[p] == '\\'; p-- {
			run++
		}
		if run%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Unescaped is the string v, a JSON string of printable ASCII, decoded: its
// escapes are the two-character ones (\" \\ \/ \b \f \n \r \t) and \u0000 to
// \u007f, each one byte. ok is false for any other value: a string with a byte
// outside printable ASCII, or another escape (a character beyond ASCII, a
// surrogate), which the general decoder reads.
func Unescaped(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	var out strings.Builder
	out.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < 0x20 || c >= 0x7f || c == '"':
			return "", false
		case c != '\\':
			out.WriteByte(c)
			continue
		}
		if i++; i >= len(v) {
			return "", false
		}
		switch v[i] {
		case '"', '\\', '/':
			out.WriteByte(v[i])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			if i+4 >= len(v) || v[i+1] != '0' || v[i+2] != '0' {
				return "", false
			}
			hi, lo := unhex(v[i+3]), unhex(v[i+4])
			if hi < 0 || hi > 7 || lo < 0 {
				return "", false
			}
			out.WriteByte(byte(hi<<4 | lo))
			i += 4
		default:
			return "", false
		}
	}
	return out.String(), true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
