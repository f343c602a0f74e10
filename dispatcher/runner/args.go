package runner

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// SplitArgs splits an invocation body into positional arguments on "|", exactly as
// the article's String(body).split('|'): an empty body gives [""], never nil.
func SplitArgs(body string) []string {
	return strings.Split(body, "|")
}

// Mode says how Substitute escapes a value for the position it lands in.
type Mode int

const (
	// ModeRaw inserts values as they are.
	ModeRaw Mode = iota
	// ModeURL escapes with url.PathEscape before the template's first "?" and with
	// url.QueryEscape after it (query and fragment).
	ModeURL
	// ModeJSON JSON-string-escapes a value that lands inside a string literal of the
	// template (between unescaped double quotes) and inserts it raw elsewhere, so
	// ["$1"] cannot be broken out of and a bare $2+ passes a JSON document intact.
	ModeJSON
)

// String names the mode as the article does.
func (m Mode) String() string {
	switch m {
	case ModeURL:
		return "url"
	case ModeJSON:
		return "json"
	default:
		return "raw"
	}
}

// Substitute expands the placeholders of tmpl in one pass:
//
//	$N       the N-th argument (1-based); missing gives ""
//	$N+      arguments N..end rejoined with "|" (the way to accept a pipe)
//	$NAME    vars[NAME] for NAME matching [A-Z_][A-Z0-9_]* ($PREV, flow bindings);
//	         an unresolved name stays in place as literal text
//	$$N, $$N+, $$NAME
//	         the same values, inserted without escaping
//
// Any other "$" is literal. $0 is always "" and $0+ is the same as $1+. Escaping
// follows mode, decided by the position in the template, never by the values.
func Substitute(tmpl string, args []string, vars map[string]string, mode Mode) string {
	first := strings.IndexByte(tmpl, '$')
	if first < 0 {
		return tmpl
	}
	var b strings.Builder
	b.Grow(len(tmpl) + 32)

	var (
		inQuery  bool // ModeURL: a '?' or '#' of the template has been passed
		inString bool // ModeJSON: inside a string literal of the template
		escaped  bool // ModeJSON: previous template byte was a backslash inside a string
	)
	track := func(c byte) {
		switch mode {
		case ModeURL:
			if c == '?' || c == '#' {
				inQuery = true
			}
		case ModeJSON:
			switch {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			}
		}
	}
	for i := 0; i < first; i++ {
		track(tmpl[i])
	}
	b.WriteString(tmpl[:first])

	for i := first; i < len(tmpl); {
		c := tmpl[i]
		if c != '$' {
			track(c)
			b.WriteByte(c)
			i++
			continue
		}
		escaped = false
		val, n, ok := placeholder(tmpl[i:], args, vars)
		if !ok {
			// Literal text: copy the whole unresolved token so that "$$NAME" is not
			// re-read as "$" followed by "$NAME".
			b.WriteString(tmpl[i : i+n])
			i += n
			continue
		}
		raw := n > 1 && tmpl[i+1] == '$'
		switch {
		case raw || mode == ModeRaw:
			b.WriteString(val)
		case mode == ModeURL && inQuery:
			b.WriteString(url.QueryEscape(val))
		case mode == ModeURL:
			b.WriteString(url.PathEscape(val))
		case mode == ModeJSON && inString:
			writeJSONString(&b, val)
		default:
			b.WriteString(val)
		}
		i += n
	}
	return b.String()
}

// placeholder reads the token at s[0]=='$'. It returns the value, the token length,
// and whether it resolved. An unrecognised or unresolved token reports ok=false and
// the length of text to copy literally (at least 1).
func placeholder(s string, args []string, vars map[string]string) (val string, n int, ok bool) {
	j := 1
	if j < len(s) && s[j] == '$' {
		j++
	}
	start := j
	switch {
	case j < len(s) && isDigit(s[j]):
		idx := 0
		for j < len(s) && isDigit(s[j]) {
			if idx < 1<<20 {
				idx = idx*10 + int(s[j]-'0')
			}
			j++
		}
		if j < len(s) && s[j] == '+' {
			j++
			return joinFrom(args, idx), j, true
		}
		if idx >= 1 && idx <= len(args) {
			return args[idx-1], j, true
		}
		return "", j, true
	case j < len(s) && isNameStart(s[j]):
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		if v, found := vars[s[start:j]]; found {
			return v, j, true
		}
		return "", j, false
	default:
		// "$" or "$$" not followed by a placeholder: copy the dollars literally.
		return "", j, false
	}
}

// joinFrom rejoins args[n-1:] with "|"; n < 1 counts as 1.
func joinFrom(args []string, n int) string {
	if n < 1 {
		n = 1
	}
	if n > len(args) {
		return ""
	}
	if n == len(args) {
		return args[n-1]
	}
	return strings.Join(args[n-1:], "|")
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool { return (c >= 'A' && c <= 'Z') || c == '_' }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

const hexDigits = "0123456789abcdef"

// writeJSONString writes s escaped for the inside of a JSON string literal (without
// the surrounding quotes). Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func writeJSONString(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
}
