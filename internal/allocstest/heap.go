package allocstest

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// movedToHeap is the compiler's report of a local it allocates on the heap.
// Its file is named relative to the package's directory, or to the module's
// when the build's output was cached: only the file's name is used.
var movedToHeap = regexp.MustCompile(`^(?:\S*/)?([^/:\s]+\.go):(\d+):\d+: moved to heap: (\S+)$`)

// MovedToHeap compiles the package in dir (the test's own: ".") with the
// compiler's escape report and returns, for each function of its non-test
// files, the locals the compiler moves to the heap: each one allocation every
// time the function runs. Functions are named as they are declared:
// "Server.dispatch" for a method, "gateInput" for a function; a function
// literal counts as the function it is in. It skips the test with -short (it
// compiles the package) and when no go command is on the PATH, and fails it
// when the report names no local at all (it was not read right).
func MovedToHeap(t testing.TB, dir string) map[string][]string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the package with -gcflags=-m; not in -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH to compile the package with -gcflags=-m")
	}
	cmd := exec.Command(goCmd, "build", "-gcflags=-m", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m in %s: %v\n%s", dir, err, out)
	}
	funcs := declaredFuncs(t, dir)
	moved := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := movedToHeap.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		for _, f := range funcs[m[1]] {
			if f.from <= line && line <= f.to {
				moved[f.name] = append(moved[f.name], m[3])
				break
			}
		}
	}
	if len(moved) == 0 {
		t.Fatalf("the compiler's report for %s named no local moved to the heap: is it read right?\n%s", dir, out)
	}
	return moved
}

// funcSpan is where a function is declared in its file.
type funcSpan struct {
	name     string
	from, to int
}

// declaredFuncs is the functions each non-test file of dir declares, by file name.
func declaredFuncs(t testing.TB, dir string) map[string][]funcSpan {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string][]funcSpan{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = receiverName(fd.Recv.List[0].Type) + "." + name
			}
			out[filepath.Base(path)] = append(out[filepath.Base(path)], funcSpan{name: name,
				from: fset.Position(fd.Pos()).Line, to: fset.Position(fd.End()).Line})
		}
	}
	return out
}

// receiverName is the type a method's receiver is, without its star or type parameters.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
