package ask

import (
	"strings"

	"github.com/capdir/capdir/contract"
)

// field is a part of a row that is searched, each with its own weight.
type field uint8

const (
	fieldKey field = iota
	fieldWhat
	fieldWhen
	fieldCategory
	fieldArgs
	fieldOutput
	fieldSummary
	numFields
)

// fieldNames are the names a result's why uses, in field order.
var fieldNames = [numFields]string{"key", "what", "when_to_use", "category", "args", "output", "summary"}

// fieldWeights boost a term by where it is found: the key names the capability, the
// WHAT line says what it does, WHEN_TO_USE when to reach for it; the category
// groups it; ARGS and OUTPUT describe its edges; the untagged comment lines are
// free prose.
var fieldWeights = [numFields]float64{3.0, 2.5, 2.0, 1.5, 1.0, 1.0, 0.75}

// rowFields returns the searched text of r, by field: the key, the category, and
// from the docstring (contract.ParseDoc) WHAT, WHEN_TO_USE, ARGS and OUTPUT, and
// the summary: every untagged comment line (ParseDoc's Summary is only the first).
// A row without a WHAT line is described by its first untagged comment line
// instead, or, for an agent row without comment lines, by the first line of its
// prompt (as contract.Row.Description is), and that line is searched as its WHAT.
// EX is not searched: it repeats the key and sample arguments. It also returns the
// row's description, contract.Row.Description without parsing the content again.
func rowFields(r *contract.Row) ([numFields]string, string) {
	d := contract.ParseDoc(r.Content)
	var f [numFields]string
	f[fieldKey] = r.Key
	f[fieldCategory] = r.Category
	f[fieldWhat] = d.What
	f[fieldWhen] = d.WhenToUse
	f[fieldArgs] = d.Args
	f[fieldOutput] = d.Output
	f[fieldSummary] = summaryLines(r.Content, d.Summary, d.What == "")
	desc := d.Description()
	if desc == "" {
		desc = contract.Description(r) // an agent's prompt; empty otherwise
	}
	switch {
	case d.What != "":
	case d.Summary != "":
		f[fieldWhat] = d.Summary
	case d.First == "":
		f[fieldWhat] = desc
	}
	return f, desc
}

// summaryLines joins the untagged comment lines of content, all of them, or all but
// the first when skipFirst. first is ParseDoc's Summary: when it is empty there is
// none. A line is untagged when ParseDoc of that line alone finds it a Summary;
// only lines that begin like a tag are parsed again.
func summaryLines(content, first string, skipFirst bool) string {
	if first == "" {
		return ""
	}
	var b strings.Builder
	for line := range strings.SplitSeq(content, "\n") {
		text := strings.TrimLeft(line, " \t\r")
		if !strings.HasPrefix(text, "#") {
			continue
		}
		text = strings.TrimSpace(strings.TrimLeft(text, "#"))
		if text == "" || (mayBeTagged(text) && contract.ParseDoc(line).Summary == "") {
			continue
		}
		if skipFirst {
			skipFirst = false
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(text)
	}
	return b.String()
}

// mayBeTagged reports whether a comment's text begins like one of ParseDoc's tags
// (what, when…to…use, args, ex, output), in any case.
func mayBeTagged(text string) bool {
	for _, tag := range [...]string{"what", "when", "args", "ex", "output"} {
		if len(text) >= len(tag) && strings.EqualFold(text[:len(tag)], tag) {
			return true
		}
	}
	return false
}
