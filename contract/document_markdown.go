package contract

import (
	"encoding/json"
	"strings"
)

// Markdown renders the document as text/markdown: the same blocks as its JSON, in
// the same order. Row text is put on one line each (control characters become
// spaces), so nothing a row holds can start a block of its own.
func (d *Document) Markdown() []byte {
	var b mdBuilder
	b.line("# " + d.Key)
	b.line("")
	b.line("Path: " + strings.Join(d.Path, " > ") + " (siblings: " + d.Siblings + ")")
	b.line("This is the contract of one capability in a capdir directory. It assumes you know nothing else: read it whole before calling. As JSON: " + d.Formats.JSON)
	b.section("Capability", d.Capability)
	b.section("When to use", d.WhenToUse)
	b.heading("RUN NOW")
	if d.RunNow != "" {
		b.line(d.RunNow)
		b.line("One GET fires the example (with your credential). Add &shape=true to see the call it would send, without sending it.")
	} else {
		b.line("The example is too long for one URL: POST it (see Invocation).")
	}
	b.heading("Example call")
	b.line(codeSpan(d.ExampleCall))
	b.line("The router tag form: the arguments go between the tags.")
	b.heading("type · runner · auth · risk")
	b.line(d.Type + " · " + d.Runner + " · " + d.authLine() + " · " + d.Risk.Level)
	b.item("auth: " + d.Auth.Note)
	b.item("risk " + d.Risk.Level + ": " + d.Risk.Note)
	b.heading("inputs / outputs")
	in, _ := json.Marshal(struct {
		Args        string          `json:"args"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
	}{d.Inputs.Args, d.Inputs.InputSchema})
	b.item("inputs: " + string(in))
	if d.Inputs.Note != "" {
		b.item(d.Inputs.Note)
	}
	b.item("outputs: " + d.Outputs)
	b.heading("Affordances")
	b.item("credential: " + d.Affordances.Credential)
	b.item("can: " + listOrNone(d.Affordances.Can))
	b.item("cannot: " + listOrNone(d.Affordances.Cannot))
	b.line(d.Affordances.Note)
	b.heading("Machine Contract")
	for i, s := range d.MachineContract {
		b.line(string(rune('1'+i)) + ". " + s)
	}
	b.heading("Invocation / Ledger / Repair")
	inv := d.Invocation
	for _, kv := range [][2]string{{"invoke", inv.Invoke}, {"ledger", inv.Ledger}, {"receipt", inv.Receipt}, {"replay", inv.Replay}, {"repair", inv.Repair}, {"contract", inv.Contract}} {
		b.item(kv[0] + ": " + kv[1])
	}
	b.heading("Troubleshooting")
	for i, p := range d.Troubleshooting {
		b.line(string(rune('1'+i)) + ". " + codeSpan(p.Symptom) + ": " + p.Cause + ". Do: " + p.Action + ". " + p.URL)
	}
	return []byte(b.String())
}

func (d *Document) authLine() string {
	switch {
	case d.Auth.Form == "":
		return "none"
	case len(d.Auth.Variables) == 0:
		return d.Auth.Form + ", required"
	}
	return d.Auth.Form + " " + strings.Join(d.Auth.Variables, ", ") + ", required"
}

// mdBuilder writes lines, each made one line.
type mdBuilder struct{ strings.Builder }

func (b *mdBuilder) line(s string) {
	b.WriteString(flatLine(s))
	b.WriteByte('\n')
}

func (b *mdBuilder) heading(s string) {
	b.WriteByte('\n')
	b.line("## " + s)
}

func (b *mdBuilder) section(title, text string) {
	b.heading(title)
	b.line(text)
}

func (b *mdBuilder) item(s string) { b.line("- " + s) }

// flatLine replaces control characters and the Unicode line and paragraph
// separators with spaces.
func flatLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// codeSpan is s as a Markdown code span, exact: its delimiter is one backtick more
// than the longest run of backticks in s, padded with spaces when s has any.
func codeSpan(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

func listOrNone(ss []string) string {
	if len(ss) == 0 {
		return "nothing"
	}
	return strings.Join(ss, ", ")
}
