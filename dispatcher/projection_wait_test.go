package dispatcher_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every wait of the dispatcher, the command side and the facade for the
// projection is bounded by one setting, projector.Settings.Wait
// (Projector.WaitContext): no timeout of theirs is a literal duration.
func TestNoLiteralTimeouts(t *testing.T) {
	for _, dir := range []string{".", "../command", "../api"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "health.go") { // health's 2s bounds a probe, not a read
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "WithTimeout" {
					return true
				}
				if lit := literalDuration(call.Args[1]); lit {
					t.Errorf("%s: a timeout of a literal duration; bound a wait for the projection with Projector.WaitContext, name any other", fset.Position(call.Pos()))
				}
				return true
			})
		}
	}
}

// literalDuration reports whether e is a number times a time unit.
func literalDuration(e ast.Expr) bool {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.MUL {
		return false
	}
	_, lx := b.X.(*ast.BasicLit)
	_, ly := b.Y.(*ast.BasicLit)
	return lx || ly
}
