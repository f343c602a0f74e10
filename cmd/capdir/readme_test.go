package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The README's shell lines can be pasted as they are: no invocation id of someone
// else's run, the key in the variable the CLI reads, background servers from a
// built binary (kill -INT on go run's pid leaves its child running). The README
// stands alone and links the performance history instead of carrying it.
func TestREADMEShellLinesPasteAsWritten(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	invID := regexp.MustCompile(`inv_[0-9a-z]{26}`)
	bareKey := regexp.MustCompile(`(^|[^A-Z_])TERMINAL_KEY`)
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readme, -1) {
		for _, line := range strings.Split(block[1], "\n") {
			cmd, _, _ := strings.Cut(line, " #") // a trailing comment is not run
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			switch {
			case invID.MatchString(cmd):
				t.Errorf("a command names a fixed invocation id: %s", line)
			case bareKey.MatchString(cmd):
				t.Errorf("a command uses TERMINAL_KEY; the CLI reads CAPDIR_TERMINAL_KEY: %s", line)
			case strings.HasPrefix(cmd, "go run") && strings.HasSuffix(strings.TrimSpace(cmd), "&"):
				t.Errorf("a background start through go run: %s", line)
			}
		}
	}
	if strings.Contains(strings.ToLower(readme), "the reference") {
		t.Error(`the README mentions "the reference"`)
	}
	if !strings.Contains(readme, "](docs/performance.md)") {
		t.Error("the README does not link docs/performance.md")
	}
	if _, err := os.Stat("../../docs/performance.md"); err != nil {
		t.Error(err)
	}
}

// README's Layout table names exactly the packages of the tree (go list ./...),
// plus testdata, docs and examples/cluster.
func TestREADMELayoutMatchesTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
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
}
