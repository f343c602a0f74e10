package failure

import "strings"

// faultNames are the faults as a rendered table names who acts.
var faultNames = map[Fault]string{
	FaultCall:    "the caller",
	FaultRow:     "the row's owner",
	FaultService: "the upstream or service",
	FaultBreaker: "the credential's owner",
	FaultNode:    "the operator",
}

// Markdown is the table as a Markdown table: each literal, what it means, what
// fixes it, and who acts.
func (t Table) Markdown() string {
	var b strings.Builder
	b.WriteString("| literal | meaning | fix | who |\n|---|---|---|---|\n")
	for _, e := range t {
		b.WriteString("| `" + cell(e.Literal) + "` | " + cell(e.Cause) + " | " + cell(e.Fix) + " | " + faultNames[e.Fault] + " |\n")
	}
	return b.String()
}

// cell is s as a Markdown table cell: a | would end it.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
