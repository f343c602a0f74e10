package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// ForbidCalls fails t for each call, in pkg's own non-test files, of a method or
// package function named one of names (x.Append(…) for "Append"): a package that
// must leave a kind of change to another calls none of its methods itself. The
// match is by name, so a name another type shares is forbidden too.
func ForbidCalls(t testing.TB, pkg string, names ...string) {
	t.Helper()
	files := list(t, pkg, "-f", `{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}`)
	if len(files) == 0 {
		t.Fatalf("go list %s listed no Go files", pkg)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(names, sel.Sel.Name) {
				p := fset.Position(call.Pos())
				t.Errorf("%s:%d: %s calls %s", filepath.Base(p.Filename), p.Line, pkg, sel.Sel.Name)
			}
			return true
		})
	}
}
