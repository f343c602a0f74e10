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
	deps := list(t, pkg, "-deps")
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s listed only %d packages: %s", pkg, len(deps), deps)
	}
	return deps
}

// Imports is the import paths pkg's own non-test files name.
func Imports(t testing.TB, pkg string) []string {
	t.Helper()
	return list(t, pkg, "-f", `{{join .Imports "\n"}}`)
}

func list(t testing.TB, pkg string, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	args = append(append([]string{"list"}, args...), pkg)
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Fields(string(out))
}

// Forbid fails t for each package pkg depends on whose import path starts with one
// of the forbidden prefixes; a prefix ending in "=" matches that path exactly
// ("github.com/capdir/capdir=" is the module root, not every package in it).
func Forbid(t testing.TB, pkg string, forbidden ...string) {
	t.Helper()
	deps := Deps(t, pkg)
	forbid(t, pkg, deps, forbidden)
	t.Logf("%s: %d packages", pkg, len(deps))
}

// ForbidImports is Forbid for the packages pkg's own files import: a package may
// reach one through another that keeps it inside.
func ForbidImports(t testing.TB, pkg string, forbidden ...string) {
	t.Helper()
	forbid(t, pkg, Imports(t, pkg), forbidden)
}

func forbid(t testing.TB, pkg string, deps, forbidden []string) {
	t.Helper()
	for _, d := range deps {
		for _, f := range forbidden {
			if exact, ok := strings.CutSuffix(f, "="); ok && d == exact || !ok && strings.HasPrefix(d, f) {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
