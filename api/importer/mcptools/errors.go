package mcptools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The refusals of a tool, each the reason an import report gives for it.

// MaxToolName bounds a tool's name in bytes, as MCP's tool names are bounded.
const MaxToolName = 128

// nameProblem is why name cannot be a row's tool, "" when it can: it is empty,
// over MaxToolName bytes, not UTF-8, or holds white space or a control or
// format character (a row's target, content and SOURCE line carry the name, and
// the logs and consoles that show them must not be steered by it).
func nameProblem(name string) string {
	switch {
	case name == "":
		return "the tool name is empty"
	case len(name) > MaxToolName:
		return fmt.Sprintf("the tool name is over %d bytes", MaxToolName)
	case !utf8.ValidString(name):
		return "the tool name is not UTF-8"
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r) {
			return fmt.Sprintf("the tool name holds white space or a control character (%U)", r)
		}
	}
	return ""
}

// shownName is a tool name as a report shows it: printable, valid UTF-8, at most
// MaxToolName bytes, every other character as '?'.
func shownName(name string) string {
	if len(name) > MaxToolName {
		name = name[:MaxToolName]
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(name, "?"))
}

// overMax is the refusal of a tool past the number one upstream may bring.
func overMax(max int) string { return fmt.Sprintf("over the %d tools one upstream may bring", max) }

// keyTaken is the refusal of a tool whose key another tool of the list has.
func keyTaken(key, other string) string {
	return fmt.Sprintf("maps to the key %s, as the tool %q does", key, other)
}

// keyOfOther is the refusal of a tool whose key is under another upstream's
// prefix.
func keyOfOther(key, prefix, other string) string {
	return fmt.Sprintf("maps to the key %s, of the prefix %s_ of the upstream %s", key, prefix, other)
}
