package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The manual: README.md and every page under docs/, paths relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return append([]string{"../../README.md"}, pages...)
}

// docBlock is one fenced ```sh block of a page: its text and the answers its
// comments show (see expectations).
type docBlock struct {
	line int // the line of its opening fence, 1-based
	text string
}

// shellBlocks are the ```sh blocks of a page, in order.
func shellBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && line == "```sh":
			cur = &docBlock{line: i + 1}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```sh block is not closed", path, cur.line)
	}
	return blocks
}

// pasted reports whether the docs test pastes a block: one that runs go test (the
// suite this test belongs to) or go install (which fetches a module) is shown, not run.
func (b docBlock) pasted() bool {
	for _, line := range strings.Split(b.text, "\n") {
		cmd, _, _ := strings.Cut(line, " #")
		cmd = strings.TrimSpace(cmd)
		if strings.HasPrefix(cmd, "go test") || strings.HasPrefix(cmd, "go install") {
			return false
		}
	}
	return true
}

var trailingNote = regexp.MustCompile(`\s{2,}\([^()]*\)\s*$`)

// expectations are the answers a block's comments show: a comment line starting
// with "# {" (a JSON answer), continued by lines starting with "#  " and a
// non-space. Each is split on "…" (what varies from run to run) into the pieces
// that must appear in the block's output, in order. A note in parentheses after two
// spaces at its end, such as "(HTTP 201)" (a status curl does not print), is prose.
func (b docBlock) expectations() [][]string {
	var all [][]string
	var cur []string
	flush := func() {
		if cur == nil {
			return
		}
		text := trailingNote.ReplaceAllString(strings.Join(cur, ""), "")
		var pieces []string
		for _, p := range strings.Split(text, "…") {
			if p = strings.TrimSpace(p); p != "" {
				pieces = append(pieces, p)
			}
		}
		all = append(all, pieces)
		cur = nil
	}
	for _, line := range strings.Split(b.text, "\n") {
		switch {
		case strings.HasPrefix(line, "# {"):
			flush()
			cur = []string{strings.TrimPrefix(line, "# ")}
		case cur != nil && len(line) > 3 && strings.HasPrefix(line, "#  ") && line[3] != ' ':
			cur = append(cur, line[3:])
		default:
			flush()
		}
	}
	flush()
	return all
}

// startsServer reports whether a block starts capdir serve (in the background).
func (b docBlock) startsServer() bool {
	for _, line := range strings.Split(b.text, "\n") {
		cmd, _, _ := strings.Cut(line, " #")
		if strings.HasPrefix(strings.TrimSpace(cmd), "capdir serve") {
			return true
		}
	}
	return false
}
