package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/natsrunner"
)

// failureSections are the failure tables docs/failures.md prints, in its order.
var failureSections = []struct {
	title, intro string
	table        failure.Table
}{
	{"The gate", "Refusals before any runner: the credential and the token's checks, the row's state, the breaker, the input schema, the watcher. Each is a receipt's result (an approval_pending call gets its receipt later).", gate.Failures},
	{"Every runner", "Literals any runner may write; `<runner>` is its name (fn, http, nats, flow, agent, mcp).", runner.Failures},
	{"fn", "Rows of type fn: a function registered on the node.", fnrunner.Failures},
	{"http", "Rows of type http: an upstream called over HTTP.", httprunner.Failures},
	{"nats", "Rows of runner nats: a request to a NATS subject.", natsrunner.Failures},
	{"flow", "Rows of type flow: steps run as invocations of other rows.", flowrunner.Failures},
	{"agent", "Rows of type agent: a chat-completion model and the rows offered to it as tools.", agentrunner.Failures},
	{"mcp", "Rows of runner mcp: a tool of an upstream MCP server.", mcprunner.Failures},
	{"The dispatcher", "A receipt the log refused, and a step refused for its place in its call tree.", dispatcher.Failures},
}

const failuresPage = "../../docs/failures.md"

// failuresMarkdown is docs/failures.md as the tables make it.
func failuresMarkdown() string {
	var b strings.Builder
	b.WriteString("# Failures\n\n")
	b.WriteString("Every literal a call can answer with, by who writes it: what it means, what fixes it, and who acts. ")
	b.WriteString("`<name>` stands for a variable part, `…` for the text of another literal. ")
	b.WriteString("A row's contract document (`GET /api/dispatch?key=KEY&format=json`, see [Discovery](discovery.md)) lists the ones its callers meet most.\n\n")
	b.WriteString("This page is made from the failure tables the gate, each runner and the dispatcher export, which build each literal: ")
	b.WriteString("`CAPDIR_UPDATE_DOCS=1 go test -run TestDocsFailuresPageIsTheTables ./cmd/capdir` writes it again.\n")
	for _, s := range failureSections {
		b.WriteString("\n## " + s.title + "\n\n" + s.intro + "\n\n" + s.table.Markdown())
	}
	return b.String()
}

// docs/failures.md is the failure tables, rendered: every literal a table holds is
// documented, as the code writes it.
func TestDocsFailuresPageIsTheTables(t *testing.T) {
	want := failuresMarkdown()
	if os.Getenv("CAPDIR_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(failuresPage, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(failuresPage)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/failures.md is not the failure tables; write it again with CAPDIR_UPDATE_DOCS=1 go test -run TestDocsFailuresPageIsTheTables ./cmd/capdir")
	}
}

// docLiteral is an ERR: literal quoted in a page's prose: a code span.
var docLiteral = regexp.MustCompile("`(ERR:[^`]*)`")

// Every ERR: literal a page quotes is one the code writes: an instance of an entry
// of a failure table (its <…> and … parts standing for any text), or, when it ends
// with ':', the start of one.
func TestDocsLiteralsAreInTheTables(t *testing.T) {
	var all failure.Table
	for _, s := range failureSections {
		all = append(all, s.table...)
	}
	var checked int
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := regexp.MustCompile("(?ms)^```.*?^```").ReplaceAllString(string(b), "")
		for _, m := range docLiteral.FindAllStringSubmatch(page, -1) {
			lit := m[1]
			checked++
			if !documented(all, lit) {
				t.Errorf("%s quotes %q, which no failure table holds", strings.TrimPrefix(path, "../../"), lit)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no literal to check")
	}
}

// A misspelt literal is caught even where a catch-all entry of its family would
// hold it; such an entry is quoted by its pattern, not by an instance.
func TestDocumentedLiterals(t *testing.T) {
	var all failure.Table
	for _, s := range failureSections {
		all = append(all, s.table...)
	}
	for lit, want := range map[string]bool{
		"ERR:http:origin_busy:<origin>:<max>": true,
		"ERR:http:origin_busy:127.0.0.1:3":    true,
		"ERR:http:orign_busy:<origin>:<max>":  false,
		"ERR:http:<status>:<body>":            true,
		"ERR:http:503:down":                   false, // a catch-all is quoted by its pattern
		"ERR:mcp:canceled:<reason>":           true,
		"ERR:<runner>:canceled:…":             true,
		"ERR:flow:cycle:A>B>A":                true,
		"ERR:flow:cylce:A>B>A":                false,
		"ERR:fn:unknown_target:nosuch":        true,
		"ERR:disabled:OFF":                    true,
		"ERR:flow:":                           true,
		"ERR:flwo:":                           false,
		"ERR:agent:include:<KEY>:no such row": true,
		"ERR:nats:reserved_subjct:<subject>":  false,
	} {
		if got := documented(all, lit); got != want {
			t.Errorf("documented(%q) = %v, want %v", lit, got, want)
		}
	}
}

// documented reports whether lit, as a page quotes it, is a literal of t. An
// entry whose pattern holds another entry's literal (ERR:http:<status>:<body>,
// ERR:…) would hold any misspelt literal of its family: lit is taken to be one of
// those only when it quotes the entry's fixed start as it is.
func documented(t failure.Table, lit string) bool {
	if lit == "ERR:" {
		return true // the prefix every failure shares
	}
	if strings.HasSuffix(lit, ":") {
		for _, e := range t {
			if strings.HasPrefix(e.Literal, lit) {
				return true
			}
		}
		return false
	}
	for _, e := range t {
		if e.Matches(lit) && (!catchAll(t, e) || fixedStart(e.Literal) == fixedStart(lit)) {
			return true
		}
	}
	return false
}

// catchAll reports whether e's pattern holds the literal of another entry of t.
func catchAll(t failure.Table, e failure.Entry) bool {
	for _, o := range t {
		if o.Literal != e.Literal && e.Matches(o.Literal) {
			return true
		}
	}
	return false
}

// fixedStart is a literal up to its first variable part.
func fixedStart(lit string) string {
	if i := strings.IndexAny(lit, "<…"); i >= 0 {
		return lit[:i]
	}
	return lit
}
