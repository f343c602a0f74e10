package contract

import (
	"regexp"
	"strings"
)

// Doc is the docstring of a row: the # comment lines of its content.
type Doc struct {
	What      string // # WHAT:
	WhenToUse string // # WHEN_TO_USE:
	Args      string // # ARGS:
	Ex        string // # EX:
	Output    string // # OUTPUT:

	// Summary is the text of the first comment line that carries none of the five
	// tags, e.g. NOW's "Return the current time from the build clock …".
	Summary string
	// First is the text of the first comment line that says something, tagged or not
	// (a bare tag such as "# WHAT:" says nothing).
	First string
}

// docTag matches a tagged docstring line. It tolerates spacing and case, and
// "WHEN TO USE" / "WHEN-TO-USE" for WHEN_TO_USE: "#what:x", "#  When_To_Use : x".
var docTag = regexp.MustCompile(`(?i)^(what|when[ _-]?to[ _-]?use|args|ex|output)\s*:\s*(.*)$`)

// ParseDoc extracts the docstring from content. A comment line is a line whose first
// non-space character is '#'; its text is what follows the leading '#' characters,
// trimmed. The first occurrence of each tag wins; later ones are ignored.
func ParseDoc(content string) Doc {
	var d Doc
	for _, line := range strings.Split(content, "\n") {
		text, ok := commentText(line)
		if !ok || text == "" {
			continue
		}
		m := docTag.FindStringSubmatch(text)
		if m != nil && strings.TrimSpace(m[2]) == "" {
			continue // a bare tag ("# WHAT:") says nothing
		}
		if d.First == "" {
			d.First = text
		}
		if m == nil {
			if d.Summary == "" {
				d.Summary = text
			}
			continue
		}
		var dst *string
		switch tag := strings.ToLower(m[1]); {
		case tag == "what":
			dst = &d.What
		case tag == "args":
			dst = &d.Args
		case tag == "ex":
			dst = &d.Ex
		case tag == "output":
			dst = &d.Output
		default:
			dst = &d.WhenToUse
		}
		if *dst == "" {
			*dst = strings.TrimSpace(m[2])
		}
	}
	return d
}

// Description is the one-line description of the capability: the # WHAT: text if
// present, else the first untagged comment line, else the first comment line.
// It is empty only when content has no non-empty comment line.
func (d Doc) Description() string {
	switch {
	case d.What != "":
		return d.What
	case d.Summary != "":
		return d.Summary
	}
	return d.First
}

// Description is the row's description: ParseDoc(content).Description(), except that
// an agent row whose content has no comment line uses the first non-empty line of its
// prompt, since an agent's content is the prompt. An empty description is the
// missing_description hygiene violation.
func Description(r *Row) string {
	if d := ParseDoc(r.Content).Description(); d != "" {
		return d
	}
	if r.Type != TypeAgent {
		return ""
	}
	for _, line := range strings.Split(r.Content, "\n") {
		if s := strings.TrimSpace(line); s != "" {
			return s
		}
	}
	return ""
}

// StripDocs removes every line whose first non-space character is '#' and trims the
// result. What remains is the executable payload: the argument template of an fn or
// http row, the steps of a flow. It is empty when content is documentation only.
func StripDocs(content string) string {
	// Mostly the comments come first and the payload after them: the payload
	// is then one stretch of content, returned as it is, without a copy.
	start, end := -1, 0
	gap := false // a comment line between two payload lines
	for rest, off := content, 0; ; {
		line, next, more := strings.Cut(rest, "\n")
		if _, ok := commentText(line); !ok {
			if start < 0 {
				start = off
			} else if end < off-1 {
				gap = true
				break
			}
			end = off + len(line)
		}
		if !more {
			break
		}
		off += len(line) + 1
		rest = next
	}
	if !gap {
		if start < 0 {
			return ""
		}
		return strings.TrimSpace(content[start:end])
	}
	return stripDocsApart(content)
}

// stripDocsApart is StripDocs for payload lines that comments stand between:
// the payload's lines kept and joined.
func stripDocsApart(content string) string {
	lines := strings.Split(content, "\n")
	kept := lines[:0]
	for _, line := range lines {
		if _, ok := commentText(line); !ok {
			kept = append(kept, line)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// commentText reports whether line is a comment line and returns its text.
func commentText(line string) (string, bool) {
	s := strings.TrimLeft(line, " \t\r")
	if !strings.HasPrefix(s, "#") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimLeft(s, "#")), true
}
