package capdir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every fuzz target of the module is run, bounded, by .ci/run: a target it does
// not name is never fuzzed at all.
func TestCIRunsEveryFuzzTarget(t *testing.T) {
	script, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^fuzz (\./\S+) (Fuzz\w+)$`).FindAllStringSubmatch(string(script), -1) {
		listed[m[1]+" "+m[2]] = true
	}
	target := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := "./" + filepath.ToSlash(filepath.Dir(path))
		for _, m := range target.FindAllStringSubmatch(string(src), -1) {
			if !listed[pkg+" "+m[1]] {
				t.Errorf("%s: fuzz target %s is not run by .ci/run: add the line `fuzz %s %s`", path, m[1], pkg, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
