package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode"
)

// The shell lines of README.md and every page under docs/ can be pasted as they
// are: no invocation id of someone else's run, the key in the variable the CLI
// reads, background servers from a built binary (kill -INT on go run's pid leaves
// its child running), no fixed port of the HTTP server (the address is
// $CAPDIR_SERVER, set once in the README), no placeholder left for the reader to fill
// in. The README stands alone, short, and links every page.
func TestREADMEShellLinesPasteAsWritten(t *testing.T) {
	invID := regexp.MustCompile(`inv_[0-9a-z]{26}`)
	bareKey := regexp.MustCompile(`(^|[^A-Z_])TERMINAL_KEY`)
	fixedPort := regexp.MustCompile(`127\.0\.0\.1:8080|localhost:8080`)
	placeholder := regexp.MustCompile(`…|<[a-z][a-z _-]*>|\[--`)
	for _, path := range docFiles(t) {
		for _, block := range shellBlocks(t, path) {
			for i, line := range strings.Split(block.text, "\n") {
				cmd, _, _ := strings.Cut(line, " #") // a trailing comment is not run
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				at := fmt.Sprintf("%s:%d: ", strings.TrimPrefix(path, "../../"), block.line+1+i)
				switch {
				case invID.MatchString(cmd):
					t.Errorf("%sa command names a fixed invocation id: %s", at, line)
				case bareKey.MatchString(cmd):
					t.Errorf("%sa command uses TERMINAL_KEY; the CLI reads CAPDIR_TERMINAL_KEY: %s", at, line)
				case strings.HasPrefix(cmd, "go run") && strings.HasSuffix(strings.TrimSpace(cmd), "&"):
					t.Errorf("%sa background start through go run: %s", at, line)
				case fixedPort.MatchString(cmd) && !strings.Contains(cmd, "${CAPDIR_SERVER:-"):
					t.Errorf("%sa command names the server's port; use $CAPDIR_SERVER: %s", at, line)
				case placeholder.MatchString(cmd):
					t.Errorf("%sa command holds a placeholder (…, <name>, [--flag]): write a synopsis as ```text: %s", at, line)
				}
			}
		}
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if strings.Contains(strings.ToLower(readme), "the reference") {
		t.Error(`the README mentions "the reference"`)
	}
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("the README has %d lines; keep it to 250 and move the detail to a page under docs/", n)
	}
	if !strings.HasPrefix(readme, "# capdir\n\n```sh\ngo run ./cmd/capdir serve ") || !strings.Contains(readme[:200], "\ngo test ./... ") {
		t.Error("the README does not open with the two commands, go run ./cmd/capdir serve and go test ./...")
	}
	for _, path := range docFiles(t)[1:] {
		page := strings.TrimPrefix(path, "../../")
		if !strings.Contains(readme, "]("+page+")") {
			t.Errorf("the README's table of contents does not link %s", page)
		}
	}
}

// The Layout table of docs/architecture.md names exactly the packages of the tree
// (go list ./...), plus testdata, docs and examples/cluster; its docs row names every
// page under docs/.
func TestREADMELayoutMatchesTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(layout, -1) {
		if listed[m[1]] {
			t.Errorf("Layout lists %s twice", m[1])
		}
		listed[m[1]] = true
	}
	goList := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "./...")
	goList.Dir = "../.."
	out, err := goList.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/capdir/capdir"
	want := map[string]bool{"testdata": true, "docs": true, "examples/cluster": true}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" {
			rel = "capdir"
		}
		want[rel] = true
	}
	for p := range want {
		if !listed[p] {
			t.Errorf("Layout does not list %s", p)
		}
	}
	for p := range listed {
		if !want[p] {
			t.Errorf("Layout lists %s, which is not in the tree", p)
		}
	}
	docsRow := regexp.MustCompile("(?m)^\\| `docs` \\|.*$").FindString(layout)
	for _, path := range docFiles(t)[1:] {
		if page := filepath.Base(path); !strings.Contains(docsRow, page) {
			t.Errorf("Layout's docs row does not name %s", page)
		}
	}
}

// Every relative link of README.md and docs/*.md leads to a file of the repository,
// and every #anchor to a heading of the page it names.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	var checked int
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(prose(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
			}
			from := strings.TrimPrefix(path, "../../")
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links %s, which is not there", from, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s links %s: an anchor in a file that is not Markdown", from, target)
				continue
			}
			if !headingAnchors(t, dest)[anchor] {
				t.Errorf("%s links %s: %s has no heading with that anchor", from, target, strings.TrimPrefix(dest, "../../"))
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no relative link to check")
	}
}

// prose is a Markdown page without its fenced blocks and code spans, where a link
// is only text.
func prose(page string) string {
	page = regexp.MustCompile("(?ms)^```.*?^```").ReplaceAllString(page, "")
	return regexp.MustCompile("`[^`]*`").ReplaceAllString(page, "")
}

// headingAnchors are the anchors GitHub gives a page's headings: lower case, every
// character but letters, digits, spaces, '-' and '_' dropped, spaces made '-', and
// "-1", "-2"… after a repeated one.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(regexp.MustCompile("(?ms)^```.*?^```").ReplaceAllString(string(b), ""), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}
