//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDocsShellBlocksPaste pastes every ```sh block of README.md and docs/*.md, as
// written, page by page and in order, into one bash per page (set -eu: a failing
// command or an unset variable fails the page), in a fresh directory holding the
// repository's files, with capdir and nats-server built once and put on PATH and
// CAPDIR_SERVER on a free port (never 8080, the default). The README starts its own
// server; each page under docs/ starts from the README's server block, as its reader
// does. Where a block shows an answer in a comment, its output must hold it. The
// conventions are in docs/testing.md. It runs when CAPDIR_DOCS_PASTE is set.
func TestDocsShellBlocksPaste(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capdir and runs every page's blocks against real servers")
	}
	if os.Getenv("CAPDIR_DOCS_PASTE") == "" {
		t.Skip("about 50 s on two quiet cores, minutes on busy ones: set CAPDIR_DOCS_PASTE=1 to run it (.ci/run does)")
	}
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the blocks need %s: %v", tool, err)
		}
	}
	// The pages name fixed ports (NATS 4222 to 4224, its routes 6222 to 6224 and
	// monitoring 8222 to 8224, the fake model 9099): one run at a time on a machine.
	lockMachine(t, filepath.Join(os.TempDir(), "capdir-docs-paste.lock"))
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, build := range [][]string{
		{"build", "-o", filepath.Join(bin, "capdir"), "./cmd/capdir"},
		{"build", "-o", filepath.Join(bin, "nats-server"), "github.com/nats-io/nats-server/v2"},
	} {
		cmd := exec.Command(goTool, build...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
		}
	}
	files := docFiles(t)
	readme := shellBlocks(t, files[0])
	var prelude string
	for _, b := range readme {
		if b.pasted() && b.startsServer() {
			prelude = b.text
			break
		}
	}
	if prelude == "" {
		t.Fatal("README.md has no block that starts capdir serve")
	}
	var pasted int
	for _, path := range files {
		blocks := shellBlocks(t, path)
		name := strings.TrimPrefix(path, "../../")
		t.Run(filepath.Base(path), func(t *testing.T) {
			var run []docBlock
			for _, b := range blocks {
				if b.pasted() {
					run = append(run, b)
				}
			}
			if len(run) == 0 {
				t.Skip("no block to paste")
			}
			pasted += len(run)
			pre := prelude
			if name == "README.md" {
				pre = ""
			}
			pastePage(t, root, bin, name, pre, run)
		})
	}
	if pasted == 0 {
		t.Fatal("no block was pasted")
	}
}

const blockMark = "::capdir-docs-block::"

// pastePage runs a page's blocks after prelude in one bash, in a directory of its
// own, and checks that every block succeeded and printed the answers it shows.
func pastePage(t *testing.T, root, bin, name, prelude string, blocks []docBlock) {
	dir := t.TempDir()
	linkRepository(t, root, dir)
	var script strings.Builder
	script.WriteString("set -eu\n")
	if prelude != "" {
		script.WriteString(prelude)
	}
	for i, b := range blocks {
		fmt.Fprintf(&script, "printf '\\n%s%d\\n'\n", blockMark, i)
		script.WriteString(b.text)
	}
	scriptPath := filepath.Join(t.TempDir(), "page.sh")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", scriptPath)
	cmd.Dir = dir
	cmd.Env = pageEnv(bin, freeServer(t))
	// Files, not pipes, so a server left in the background cannot hold Wait; its own
	// process group, so every process the page started is stopped with it.
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runErr := cmd.Wait()
	stopGroup(t, cmd.Process.Pid)

	out, _ := os.ReadFile(stdout.Name())
	errOut, _ := os.ReadFile(stderr.Name())
	outputs := strings.Split(string(out), blockMark)[1:]
	if runErr != nil {
		at := "the README's server block, run first"
		if n := len(outputs); n > 0 {
			at = fmt.Sprintf("the block at line %d", blocks[n-1].line)
		}
		t.Fatalf("%s: %s failed: %v\nits output:\n%s\nstderr (last lines):\n%s",
			name, at, runErr, lastLines(lastOr(outputs), 30), lastLines(string(errOut), 30))
	}
	if len(outputs) != len(blocks) {
		t.Fatalf("%s: %d of %d blocks ran", name, len(outputs), len(blocks))
	}
	for i, b := range blocks {
		got := outputs[i]
		for _, pieces := range b.expectations() {
			rest := got
			for _, p := range pieces {
				at := strings.Index(rest, p)
				if at < 0 {
					t.Errorf("%s: the block at line %d shows %q, which its output lacks (in order):\n%s",
						name, b.line, p, lastLines(got, 40))
					break
				}
				rest = rest[at+len(p):]
			}
		}
	}
}

// linkRepository fills dir with links to the repository's top-level entries, as a
// fresh clone holds them (those git tracks; every entry but hidden ones outside a git
// checkout), so blocks read testdata and build the examples while everything they
// write lands in dir. examples is copied: a block may change a mode there (chmod 600
// on the example keys).
func linkRepository(t *testing.T, root, dir string) {
	t.Helper()
	for _, top := range topLevelEntries(t, root) {
		if top == "examples" {
			copyTree(t, filepath.Join(root, top), filepath.Join(dir, top))
			continue
		}
		if err := os.Symlink(filepath.Join(root, top), filepath.Join(dir, top)); err != nil {
			t.Fatal(err)
		}
	}
}

func topLevelEntries(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var tops []string
	ls := exec.Command("git", "ls-files")
	ls.Dir = root
	if out, err := ls.Output(); err == nil {
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if top, _, _ := strings.Cut(f, "/"); !seen[top] {
				seen[top] = true
				tops = append(tops, top)
			}
		}
		return tops
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			tops = append(tops, e.Name())
		}
	}
	return tops
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pageEnv is the test's environment without capdir's own variables, with bin first
// on PATH and CAPDIR_SERVER set.
func pageEnv(bin, server string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CAPDIR_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CAPDIR_SERVER="+server)
}

// freeServer is the URL of a loopback port nothing listens on now, other than 8080.
func freeServer(t *testing.T) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !strings.HasSuffix(addr, ":8080") {
			return "http://" + addr
		}
	}
}

// stopGroup interrupts what is left of a page's process group (a server a page
// left running, as Ctrl-C would), and kills it if it has not ended in 15 s.
func stopGroup(t *testing.T, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, syscall.SIGINT); errors.Is(err, syscall.ESRCH) {
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("a process the page started did not stop on SIGINT within 15 s; killed")
}

func lastOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	repeats := 0
	for sc.Scan() {
		// A line repeated (a curl --retry's, each attempt alike) is shown once
		// with its count, so that it does not push what came before it out.
		if l := len(lines); l > 0 && sc.Text() == strings.TrimSuffix(lines[l-1], repeatedNote(repeats)) {
			repeats++
			lines[l-1] = sc.Text() + repeatedNote(repeats)
			continue
		}
		repeats = 0
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// repeatedNote is what lastLines adds to a line that came again n more times.
func repeatedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more times)", n)
}

// lockMachine holds an exclusive lock on path until t ends, waiting for another
// process that holds it.
func lockMachine(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// lastLines shows a run of one line once, with its count, and keeps the lines
// before it in view.
func TestLastLinesFoldsRepeatedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("serve: the log did not open: why\n")
	for range 60 {
		b.WriteString("curl: (7) Failed to connect\n")
	}
	b.WriteString("done\n")
	got := lastLines(b.String(), 3)
	want := "serve: the log did not open: why\ncurl: (7) Failed to connect (and 59 more times)\ndone"
	if got != want {
		t.Fatalf("lastLines:\n%s\nwant\n%s", got, want)
	}
	if got := lastLines("a\nb\na\n", 5); got != "a\nb\na" {
		t.Fatalf("lines that are not in a row: %q", got)
	}
}
