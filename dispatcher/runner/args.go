package runner

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// SplitArgs splits an invocation body into positional arguments on "|", exactly as
// the sample String(body).split('|'): an empty body gives [""], never nil.
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

// String names the mode as the reference does.
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

// DefaultMaxSubstitutionBytes bounds the text Substitute builds when a runner's
// configuration leaves the limit at 0: a template repeating $1 must not turn one
// request into gigabytes of memory.
const DefaultMaxSubstitutionBytes = 4 << 20 // 4 MiB

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
//
// The output is bounded while it is built: as soon as it would exceed limit bytes
// (DefaultMaxSubstitutionBytes when limit <= 0), Substitute stops and returns
// ERR:substitution_too_large:<limit> (ErrSubstitutionTooLarge). What it allocates
// stays within a small multiple of limit, whatever the template and arguments.
func Substitute(tmpl string, args []string, vars map[string]string, mode Mode, limit int) (string, error) {
	if limit <= 0 {
		limit = DefaultMaxSubstitutionBytes
	}
	if strings.IndexByte(tmpl, '$') < 0 {
		if len(tmpl) > limit {
			return "", errSubstitutionTooLarge(limit)
		}
		return tmpl, nil
	}
	out := bounded{limit: limit}
	out.b.Grow(min(len(tmpl)+32, limit))
	pos := position{mode: mode}
	for i := 0; i < len(tmpl); {
		j := strings.IndexByte(tmpl[i:], '$')
		if j != 0 {
			if j < 0 {
				j = len(tmpl) - i
			}
			pos.pass(tmpl[i : i+j])
			if !out.write(tmpl[i : i+j]) {
				return "", errSubstitutionTooLarge(limit)
			}
			i += j
			continue
		}
		pos.escaped = false
		val, n, ok := placeholder(tmpl[i:], args, vars)
		if ok {
			ok = out.value(val, n > 1 && tmpl[i+1] == '$', &pos)
		} else {
			// Literal text: copy the whole unresolved token so that "$$NAME" is not
			// re-read as "$" followed by "$NAME".
			ok = out.write(tmpl[i : i+n])
		}
		if !ok {
			return "", errSubstitutionTooLarge(limit)
		}
		i += n
	}
	return out.b.String(), nil
}

// position follows the template's literal text to tell where a placeholder lands.
type position struct {
	mode     Mode
	inQuery  bool // ModeURL: a '?' or '#' of the template has been passed
	inString bool // ModeJSON: inside a string literal of the template
	escaped  bool // ModeJSON: previous template byte was a backslash inside a string
}

// pass moves the position over literal template text.
func (p *position) pass(lit string) {
	switch p.mode {
	case ModeURL:
		if !p.inQuery && strings.ContainsAny(lit, "?#") {
			p.inQuery = true
		}
	case ModeJSON:
		for i := 0; i < len(lit); i++ {
			switch c := lit[i]; {
			case p.escaped:
				p.escaped = false
			case p.inString && c == '\\':
				p.escaped = true
			case c == '"':
				p.inString = !p.inString
			}
		}
	}
}

// bounded is Substitute's output: a strings.Builder that grows by doubling but never
// past limit, so that building up to the limit allocates less than twice the limit.
type bounded struct {
	b     strings.Builder
	limit int
}

// room makes space for n more bytes; false when they would pass the limit.
func (o *bounded) room(n int) bool {
	need := o.b.Len() + n
	if need > o.limit {
		return false
	}
	if need > o.b.Cap() {
		c, old := max(2*o.b.Cap(), need), o.b.String()
		if c > o.limit/2 { // one more doubling would pass it anyway
			c = o.limit
		}
		o.b = strings.Builder{}
		o.b.Grow(c)
		o.b.WriteString(old)
	}
	return true
}

func (o *bounded) write(s string) bool {
	if !o.room(len(s)) {
		return false
	}
	o.b.WriteString(s)
	return true
}

// value writes a placeholder's value escaped for pos, or as is when raw.
func (o *bounded) value(val string, raw bool, pos *position) bool {
	if o.b.Len()+len(val) > o.limit { // escaping never shortens a value
		return false
	}
	switch {
	case raw || pos.mode == ModeRaw:
		return o.write(val)
	case pos.mode == ModeURL && pos.inQuery:
		return o.write(url.QueryEscape(val))
	case pos.mode == ModeURL:
		return o.write(url.PathEscape(val))
	case pos.mode == ModeJSON && pos.inString:
		return o.jsonString(val)
	default:
		return o.write(val)
	}
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

// jsonEscapeLen is the length of the escape jsonString writes for the ASCII byte c.
func jsonEscapeLen(c byte) int {
	switch c {
	case '"', '\\', '\n', '\r', '\t':
		return 2
	}
	return 6
}

// jsonString writes s escaped for the inside of a JSON string literal (without the
// surrounding quotes). Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func (o *bounded) jsonString(s string) bool {
	if !o.room(len(s)) { // exact unless s needs escapes
		return false
	}
	b := &o.b
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			if !o.room(i - start + jsonEscapeLen(c)) {
				return false
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
			if !o.room(i - start + 6) {
				return false
			}
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			if !o.room(i - start + 6) {
				return false
			}
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return o.write(s[start:])
}
