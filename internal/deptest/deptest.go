// Package deptest checks, in tests, which packages a package depends on: the
// directions of capdir's imports are part of its design, and a test pins each.
package deptest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Deps is the import paths `go list -deps pkg` prints, pkg among them. It skips t
// under -short, since it runs the go tool.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s listed only %d packages: %s", pkg, len(deps), out)
	}
	return deps
}

// Forbid fails t for each package pkg depends on whose import path starts with one
// of the forbidden prefixes; a prefix ending in "=" matches that path exactly
// ("github.com/capdir/capdir=" is the module root, not every package in it).
func Forbid(t testing.TB, pkg string, forbidden ...string) {
	t.Helper()
	deps := Deps(t, pkg)
	for _, d := range deps {
		for _, f := range forbidden {
			if exact, ok := strings.CutSuffix(f, "="); ok && d == exact || !ok && strings.HasPrefix(d, f) {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	t.Logf("%s: %d packages", pkg, len(deps))
}
