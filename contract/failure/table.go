package failure

import (
	"regexp"
	"strings"
)

// Entry is one row of a failure table: a literal's pattern, what it means, and
// what fixes it. Literal is the text a caller sees with <name> standing for each
// variable part, e.g. "ERR:http:origin_changed:<want>!=<got>" (or … for a part
// that is the text of another literal); New fills the parts in order.
type Entry struct {
	Literal string
	// Cause is what the failure means: what went wrong, in one clause.
	Cause string
	// Fix is what to do about it, addressed to whoever can act.
	Fix string
	// Fault is who acts on Fix.
	Fault Fault
	// Doc is the contract documents that list the entry among their
	// troubleshooting; zero for none.
	Doc Doc
	// Kind is the sentinel an *Error built from the entry matches.
	Kind error
}

// Fault is who acts on an entry's fix.
type Fault uint8

// The faults, as a contract document points each to where it is acted on.
const (
	// FaultCall: the caller changes its arguments (shape mode shows the call as built).
	FaultCall Fault = iota
	// FaultRow: the owner repairs the row.
	FaultRow
	// FaultService: the upstream or the service behind the row (its receipts tell more).
	FaultService
	// FaultBreaker: the row's breaker is open.
	FaultBreaker
	// FaultNode: the operator of the node (its flags, its environment).
	FaultNode
)

// Doc is the set of contract documents that list an entry.
type Doc uint8

// The documents, by the row's credential. An entry may name several.
const (
	// DocEvery: every row of the runner.
	DocEvery Doc = 1 << iota
	// DocPlain: rows that name no credential.
	DocPlain
	// DocCredential: rows whose upstream needs the credential they name.
	DocCredential
	// DocMalformedAuth: rows whose auth column the runner refuses; the entry's
	// first part is the row's key.
	DocMalformedAuth
)

// placeholder is a variable part of a literal's pattern: <name>, or … for a part
// that is itself another literal's text.
var placeholder = regexp.MustCompile(`<[^<>]+>|…`)

// New is the entry's failure, its variable parts filled with parts in order. A
// part left without a value keeps its <name>.
func (e Entry) New(parts ...string) *Error { return &Error{Literal: e.Fill(parts...), Kind: e.Kind} }

// Wrap is New with the underlying error cause.
func (e Entry) Wrap(cause error, parts ...string) *Error {
	return &Error{Literal: e.Fill(parts...), Kind: e.Kind, Cause: cause}
}

// With is the entry with its first len(parts) variable parts fixed to parts: the
// entry of one runner's instance of a literal every runner shares.
func (e Entry) With(parts ...string) Entry {
	e.Literal = e.Fill(parts...)
	return e
}

// Fill is Literal with its first len(parts) variable parts replaced by parts.
func (e Entry) Fill(parts ...string) string {
	var b strings.Builder
	rest := e.Literal
	for _, p := range parts {
		loc := placeholder.FindStringIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(rest[:loc[0]])
		b.WriteString(p)
		rest = rest[loc[1]:]
	}
	b.WriteString(rest)
	return b.String()
}

// Pattern is Literal as a regular expression anchored at both ends: its fixed text
// quoted, each variable part any text (empty included).
func (e Entry) Pattern() *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	rest := e.Literal
	for {
		loc := placeholder.FindStringIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		b.WriteString(`(?s:.*)`)
		rest = rest[loc[1]:]
	}
	b.WriteString(regexp.QuoteMeta(rest))
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// Matches reports whether text is an instance of the entry's literal.
func (e Entry) Matches(text string) bool { return e.Pattern().MatchString(text) }

// Table is a family's failures, most specific first: Match takes the first entry
// whose pattern text fits.
type Table []Entry

// Match is the first entry text is an instance of; ok is false when there is none.
func (t Table) Match(text string) (Entry, bool) {
	for _, e := range t {
		if e.Matches(text) {
			return e, true
		}
	}
	return Entry{}, false
}

// Listed is the entries that the document d lists, in table order.
func (t Table) Listed(d Doc) Table {
	var out Table
	for _, e := range t {
		if e.Doc&d != 0 {
			out = append(out, e)
		}
	}
	return out
}
